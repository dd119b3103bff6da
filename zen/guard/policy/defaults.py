"""The guardian's built-in floor: lists policy/guardian.yaml can add to but never remove from.

Lean on purpose (imported by the hook). The default policy file repeats the host and path lists
so a person reading it sees what is enforced; the compiled policy is always this floor plus the
file, so deleting a line there weakens nothing.
"""

from __future__ import annotations

# Raw HTTP calls to these hosts are denied whatever the method or key: reach them through
# `zen gate NAME ...` (an integration declared in the policy).
HIGH_CONSEQUENCE_HOSTS: dict[str, tuple[str, ...]] = {
    "payments": (
        "api.stripe.com", "files.stripe.com", "connect.stripe.com",
        "api.paypal.com", "api-m.paypal.com", "api.sandbox.paypal.com", "api-m.sandbox.paypal.com",
        "api.braintreegateway.com", "connect.squareup.com", "api.squareup.com",
        "checkout-test.adyen.com", "*.adyen.com", "api.checkout.com", "api.razorpay.com",
        "api.mollie.com", "api.gocardless.com",
    ),
    "marketing": (
        "api.mailchimp.com", "*.api.mailchimp.com", "mandrillapp.com", "api.hubapi.com",
        "api.hubspot.com", "api.klaviyo.com", "a.klaviyo.com", "api.brevo.com",
        "api.sendinblue.com", "*.api-us1.com", "api.customer.io", "track.customer.io",
        "api.iterable.com", "api.braze.com", "*.braze.com",
    ),
    "email_sms": (
        "api.sendgrid.com", "api.twilio.com", "*.twilio.com", "api.postmarkapp.com",
        "api.mailgun.net", "api.eu.mailgun.net", "api.resend.com", "api.sparkpost.com",
        "rest.nexmo.com", "api.nexmo.com", "api.vonage.com", "rest.messagebird.com",
        "api.plivo.com", "api.telnyx.com", "api.mailjet.com", "email.*.amazonaws.com",
        "sns.*.amazonaws.com", "smtp.sendgrid.net", "smtp.mailgun.org", "smtp.eu.mailgun.org",
        "smtp.postmarkapp.com", "email-smtp.*.amazonaws.com", "smtp.sparkpostmail.com", "in-v3.mailjet.com",
        "smtp.resend.com", "smtp-relay.brevo.com", "smtp-relay.sendinblue.com", "smtp.mandrillapp.com",
    ),
    "helpdesk": (
        "*.zendesk.com", "api.intercom.io", "api.eu.intercom.io", "*.freshdesk.com",
        "api.helpscout.net", "*.gorgias.com", "api.front.com", "*.kustomerapp.com",
    ),
}

# Hosted APIs whose changes land beyond the worktree: reading them (GET, HEAD, OPTIONS, a
# GraphQL query) is fine; a mutating method (POST, PUT, PATCH, DELETE, a GraphQL mutation) is an
# action past the worktree, like a push: denied at observe and suggest, reported at
# act-and-report (DESIGN section 6). Only API hosts: docs.github.com and the like stay out.
HOSTED_API_HOSTS: dict[str, tuple[str, ...]] = {
    "code_hosting": (
        "api.github.com", "uploads.github.com", "gitlab.com", "api.bitbucket.org", "codeberg.org",
        "gitea.com", "dev.azure.com", "api.sourcehut.org", "git.sr.ht",
    ),
    "deploy_cloud": (
        "api.vercel.com", "api.netlify.com", "api.heroku.com", "api.fly.io", "api.machines.dev",
        "api.render.com", "backboard.railway.app", "api.digitalocean.com", "api.cloudflare.com",
        "api.linode.com", "api.hetzner.cloud", "api.supabase.com", "api.supabase.io",
        "api.vultr.com", "api.scaleway.com", "api.exoscale.com",
    ),
    "packages": (
        "upload.pypi.org", "test.pypi.org", "registry.npmjs.org", "hub.docker.com", "crates.io",
        "rubygems.org", "api.nuget.org", "www.nuget.org",
    ),
    "chat_tracking": (
        "slack.com", "hooks.slack.com", "discord.com", "discordapp.com", "api.telegram.org",
        "*.webhook.office.com", "api.linear.app", "*.atlassian.net", "api.atlassian.com",
        "api.notion.com", "sentry.io", "api.pagerduty.com", "events.pagerduty.com",
        "api.opsgenie.com", "api.asana.com", "api.trello.com", "api.clickup.com", "api.monday.com",
    ),
}

# Package indexes and registries installs may use (a host, or a `*.` pattern). An install from
# any other index, URL or VCS source is denied: the policy's `package_registries` adds mirrors.
PACKAGE_REGISTRIES: tuple[str, ...] = (
    "pypi.org", "files.pythonhosted.org", "test.pypi.org", "test-files.pythonhosted.org", "download.pytorch.org",
    "registry.npmjs.org", "registry.npmjs.com", "registry.yarnpkg.com", "npm.jsr.io",
    "crates.io", "index.crates.io", "static.crates.io", "rubygems.org", "index.rubygems.org",
    "proxy.golang.org", "sum.golang.org", "repo.maven.apache.org", "repo1.maven.org",
    "conda.anaconda.org", "repo.anaconda.com", "packagist.org", "repo.packagist.org",
    "api.nuget.org", "registry.bower.io", "deno.land", "jsr.io",
)

# environment variables that point an installer at an index (values: URLs, or a config file)
PACKAGE_SOURCE_VARS: frozenset[str] = frozenset({
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE", "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_FIND_LINKS", "UV_CONFIG_FILE",
    "NPM_CONFIG_REGISTRY", "npm_config_registry", "NPM_CONFIG_USERCONFIG", "npm_config_userconfig",
    "NPM_CONFIG_GLOBALCONFIG", "npm_config_globalconfig", "YARN_REGISTRY", "YARN_NPM_REGISTRY_SERVER",
    "BUN_CONFIG_REGISTRY", "GOPROXY", "GOFLAGS", "GONOSUMDB", "GONOSUMCHECK", "GOSUMDB", "GOINSECURE",
    "CONDARC", "PIPX_DEFAULT_INDEX_URL", "POETRY_REPOSITORIES", "RUBYGEMS_HOST", "GEM_SOURCE",
    "CARGO_REGISTRIES_CRATES_IO_PROTOCOL", "PNPM_REGISTRY",
})

# Package managers' configuration files: writing one is checked for the indexes it names.
PACKAGE_CONFIG_FILES: frozenset[str] = frozenset({
    ".npmrc", ".yarnrc", ".yarnrc.yml", "bunfig.toml", "pip.conf", "pip.ini", "uv.toml", ".condarc",
    "condarc", ".pnpmrc", ".gemrc", "config.toml"})

# Their SDKs, by the name code imports them with: using one is a raw call as well.
HIGH_CONSEQUENCE_SDKS: dict[str, tuple[str, ...]] = {
    "python": ("stripe", "braintree", "paypalrestsdk", "paypalcheckoutsdk", "paypalserversdk", "square",
               "squareup", "Adyen", "razorpay", "mollie", "gocardless_pro", "mailchimp_marketing",
               "mailchimp_transactional", "mailchimp3", "hubspot", "klaviyo_api", "klaviyo",
               "sib_api_v3_sdk", "brevo_python", "customerio", "iterable", "braze", "sendgrid",
               "twilio", "postmarker", "postmark", "resend", "sparkpost", "vonage", "nexmo", "messagebird",
               "plivo", "telnyx", "mailjet_rest", "zenpy", "intercom", "python_intercom", "freshdesk",
               "helpscout", "frontapp"),
    "js": ("stripe", "braintree", "@paypal/checkout-server-sdk", "@paypal/paypal-server-sdk", "square",
           "@adyen/api-library", "razorpay", "@mollie/api-client", "gocardless-nodejs",
           "@mailchimp/mailchimp_marketing", "@mailchimp/mailchimp_transactional", "@hubspot/api-client",
           "klaviyo-api", "@getbrevo/brevo", "sib-api-v3-sdk", "customerio-node", "@sendgrid/mail",
           "@sendgrid/client", "twilio", "postmark", "mailgun.js", "mailgun-js", "resend", "sparkpost",
           "@vonage/server-sdk", "nexmo", "messagebird", "plivo", "telnyx", "node-mailjet", "node-zendesk",
           "intercom-client", "@aws-sdk/client-ses", "@aws-sdk/client-sesv2", "@aws-sdk/client-sns",
           "@aws-sdk/client-pinpoint"),
    "ruby": ("stripe", "braintree", "paypal-sdk-rest", "paypal-checkout-sdk", "square", "square.rb",
             "adyen", "razorpay", "mollie", "gocardless_pro", "MailchimpMarketing", "gibbon", "hubspot",
             "hubspot-api-client", "klaviyo", "sib-api-v3-sdk", "customerio", "sendgrid-ruby", "twilio-ruby",
             "postmark", "mailgun", "mailgun-ruby", "resend", "vonage", "nexmo", "messagebird", "plivo",
             "telnyx", "mailjet", "zendesk_api", "intercom", "aws-sdk-ses", "aws-sdk-sesv2", "aws-sdk-sns",
             # their top-level constants (Stripe::Charge.create)
             "Stripe", "Twilio", "SendGrid", "Braintree", "Mailgun", "Postmark", "Vonage", "Plivo", "Telnyx",
             "Razorpay", "Mollie", "Intercom", "ZendeskAPI", "Aws::SES", "Aws::SNS"),
    "perl": ("Net::Stripe", "WebService::Stripe", "Business::Stripe", "WWW::Twilio::API", "Net::Twilio",
             "Email::Sender::Transport::SendGrid", "WebService::Mailgun", "Mail::Postmark", "WebService::Zendesk"),
    # PHP namespaces (\Stripe\Charge::create)
    "php": ("Stripe", "Braintree", "PayPal", "Square", "Adyen", "Razorpay", "Mollie", "GoCardlessPro",
            "MailchimpMarketing", "HubSpot", "Klaviyo", "Brevo", "SendinBlue", "SendGrid", "Twilio",
            "Postmark", "Mailgun", "Resend", "SparkPost", "Vonage", "MessageBird", "Plivo", "Telnyx",
            "Mailjet", "Zendesk", "Intercom"),
}
# cloud services whose clients send email or messages (boto3.client("ses"), ...)
MESSAGE_SERVICES: tuple[str, ...] = ("ses", "sesv2", "sns", "pinpoint", "pinpoint-email", "pinpoint-sms-voice")

# Command-line clients of those services: running them is a raw call as well.
VENDOR_CLIS: tuple[str, ...] = ("stripe", "twilio", "sendgrid", "mailchimp", "zendesk", "zcli",
                                "paypal", "braintree", "square", "intercom", "mailgun")

# Credential stores. `~/` entries are under the user's home; `/` entries are absolute globs;
# bare names match a file or directory of that name anywhere.
CREDENTIAL_PATHS: tuple[str, ...] = (
    "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.config/hub", "~/.netrc", "~/_netrc",
    "~/.git-credentials", "~/.config/git/credentials", "~/.docker/config.json", "~/.npmrc", "~/.yarnrc", "~/.pypirc",
    "~/.kube", "~/.config/gcloud", "~/.azure", "~/.password-store", "~/.local/share/keyrings",
    "~/Library/Keychains", "~/.vault-token", "~/.pgpass", "~/.my.cnf", "~/.boto", "~/.s3cfg",
    "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials",
    "~/.terraform.d/credentials.tfrc.json", "~/.config/op", "~/.op", "~/.claude/.credentials.json",
    "~/.codex/auth.json", "~/.config/anthropic", "~/.config/openai", "~/.oci", "~/.ngrok2",
    "~/.config/ngrok", "~/.config/heroku", "~/.netlify", "~/.config/netlify", "~/.vercel",
    "~/.config/vercel", "~/.config/stripe", "~/.fly", "~/.supabase",
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/proc/*/environ",
    "/run/secrets", "/var/run/secrets", "/root",
    ".env", ".env.*", ".envrc", ".git-credentials", ".netrc", ".pgpass", ".vault-token",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    "*.keystore", "*.jks", "*.p12", "*.pfx",
)

# Files that look like credentials by name but are templates meant to be read.
CREDENTIAL_EXCEPTIONS: tuple[str, ...] = (
    ".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults", ".env.schema",
    "*.example", "*.sample", "*.template",
)

# Directory names that give a credential store away even when the rest of a path is unknown.
CREDENTIAL_DIR_NAMES: tuple[str, ...] = (".ssh", ".aws", ".gnupg", ".password-store", ".kube")

# Commands that print credentials (argv prefix after the program, then flags of which any one
# must be present; no flags = always).
CREDENTIAL_COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gh auth token", ()),
    ("gh auth status", ("-t", "--show-token")),
    ("git credential fill", ()),
    ("git credential-store", ()),
    ("git credential-cache", ()),
    ("git credential-osxkeychain", ()),
    ("git credential-libsecret", ()),
    ("git credential-manager", ()),
    ("aws configure get", ()),
    ("aws configure export-credentials", ()),
    ("aws sts get-session-token", ()),
    ("aws ecr get-login-password", ()),
    ("aws ecr get-login", ()),
    ("aws codeartifact get-authorization-token", ()),
    ("gcloud auth print-access-token", ()),
    ("gcloud auth print-identity-token", ()),
    ("gcloud auth application-default print-access-token", ()),
    ("az account get-access-token", ()),
    ("kubectl config view", ("--raw", "--flatten")),
    ("kubectl create token", ()),
    ("security find-generic-password", ("-w", "-g")),
    ("security find-internet-password", ("-w", "-g")),
    ("security dump-keychain", ()),
    ("security export", ()),
    ("secret-tool lookup", ()),
    ("secret-tool search", ()),
    ("gpg --export-secret-keys", ()),
    ("gpg --export-secret-subkeys", ()),
    ("gpg2 --export-secret-keys", ()),
    ("pass show", ()),
    ("op read", ()),
    ("op item get", ()),
    ("op inject", ()),
    ("vault read", ()),
    ("vault kv get", ()),
    ("vault token lookup", ()),
    ("vault print token", ()),
    ("heroku auth:token", ()),
    ("npm token list", ()),
    ("npm token create", ()),
    ("doctl auth token", ()),
    ("fly auth token", ()),
    ("flyctl auth token", ()),
    ("docker-credential-desktop get", ()),
    ("docker-credential-pass get", ()),
    ("docker-credential-secretservice get", ()),
    ("docker-credential-osxkeychain get", ()),
    ("keyring get", ()),
)

# Read-only programs: allowed at `observe`. Arguments are still checked (credential paths, ...).
READ_ONLY_COMMANDS: tuple[str, ...] = (
    "ls", "dir", "vdir", "cat", "tac", "head", "tail", "less", "more", "most", "wc", "grep",
    "egrep", "fgrep", "rg", "ag", "ack", "zgrep", "zcat", "bzcat", "xzcat", "zstdcat", "find",
    "locate", "tree", "du", "df", "stat", "file", "pwd", "echo", "printf", "true", "false", ":",
    "test", "[", "[[", "which", "whereis", "type", "command", "hash", "basename", "dirname",
    "realpath", "readlink", "date", "cal", "whoami", "id", "groups", "hostname", "uname",
    "uptime", "nproc", "free", "arch", "lsb_release", "sleep", "seq", "yes", "cut", "paste",
    "join", "comm", "diff", "cmp", "sdiff", "colordiff", "nl", "fold", "fmt", "column", "od",
    "hexdump", "xxd", "strings", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
    "sha512sum", "b2sum", "cksum", "sum", "base64", "base32", "basenc", "iconv", "tr", "rev",
    "expand", "unexpand", "look", "jq", "yq", "sort", "uniq", "tsort", "numfmt", "expr", "bc",
    "dc", "factor", "ps", "pgrep", "pidof", "top", "htop", "lsof", "pstree", "w", "who", "last",
    "tty", "locale", "getconf", "man", "help", "info", "apropos", "whatis", "cd", "pushd",
    "popd", "dirs", "jobs", "wait", "history", "times", "ulimit", "env_parallel", "tput",
    "clear", "reset", "printenv", "lscpu", "lsblk", "lsusb", "lspci", "ip", "ifconfig",
    "netstat", "ss", "dig", "nslookup", "host", "ping", "traceroute", "getent", "id", "nm",
    "objdump", "readelf", "ldd", "size", "cloc", "tokei", "scc", "wc", "diffstat", "shellcheck",
    "awk", "gawk", "mawk", "nawk", "sed", "gsed", "zless", "bat", "batcat", "exa", "eza",
    "fd", "fdfind", "fzf", "delta", "difft", "tldr", "cowsay", "test", "nvidia-smi",
)

# Programs that only take data (no file paths): their arguments are never read as paths.
DATA_ONLY_COMMANDS: tuple[str, ...] = (
    "echo", "printf", "true", "false", ":", "test", "[", "[[", "sleep", "seq", "yes", "expr",
    "date", "basename", "dirname", "which", "whereis", "type", "hash", "command", "help", "man",
    "info", "apropos", "whatis", "tput", "factor", "numfmt", "cal", "printenv", "getent",
    "dig", "nslookup", "host", "ping", "traceroute", "cowsay", "tldr", "pgrep", "pidof",
    "kill", "pkill", "killall", "ulimit", "umask", "exit", "return", "shift", "wait", "jobs",
    "bg", "fg", "disown", "set", "shopt", "unalias", "break", "continue", "stat",
)

# System administration: with `require_approval.system_commands` on, these need a human.
SYSTEM_COMMANDS: tuple[str, ...] = (
    "systemctl", "service", "journalctl", "launchctl", "initctl", "rc-service", "apt", "apt-get",
    "aptitude", "dpkg", "yum", "dnf", "rpm", "zypper", "pacman", "apk", "brew", "port", "snap",
    "flatpak", "crontab", "at", "batch", "mount", "umount", "swapon", "swapoff", "useradd",
    "userdel", "usermod", "groupadd", "groupdel", "groupmod", "passwd", "chpasswd", "chsh",
    "chfn", "visudo", "iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "sysctl",
    "modprobe", "insmod", "rmmod", "kill", "pkill", "killall", "renice", "hostnamectl",
    "timedatectl", "localectl", "update-alternatives", "ldconfig", "setcap", "setenforce",
)

# Network clients and package managers: with `require_approval.network_requests` on, these
# (and any host an analysed client reaches) need a human.
NETWORK_COMMANDS: tuple[str, ...] = (
    "curl", "wget", "http", "https", "xh", "xhs", "httpie", "aria2c", "nc", "ncat", "netcat",
    "telnet", "socat", "ssh", "scp", "sftp", "ftp", "lftp", "rsync", "openssl", "gh", "hub",
    "glab", "aws", "gcloud", "gsutil", "az", "kubectl", "helm", "terraform", "pulumi",
    "doctl", "flyctl", "fly", "heroku", "vercel", "netlify",
)

# (program, first words) that install or publish packages over the network.
NETWORK_SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "pip": ("install", "download", "wheel"), "pip3": ("install", "download", "wheel"),
    "uv": ("add", "sync", "pip", "tool"), "poetry": ("add", "install", "update", "publish"),
    "pipenv": ("install", "update", "sync"), "npm": ("install", "i", "ci", "add", "update",
                                                     "publish", "exec"),
    "pnpm": ("install", "i", "add", "update", "publish", "dlx"), "yarn": ("install", "add",
                                                                        "upgrade", "publish", "dlx"),
    "bun": ("install", "add", "update", "publish", "x"), "cargo": ("install", "publish", "fetch",
                                                                  "update"),
    "go": ("get", "install", "mod"), "gem": ("install", "push", "update"),
    "bundle": ("install", "update"), "composer": ("install", "require", "update"),
    "docker": ("pull", "push", "login"), "podman": ("pull", "push", "login"),
    "git": ("push", "fetch", "pull", "clone", "ls-remote", "submodule"), "twine": ("upload",),
    "npx": (), "bunx": (), "pnpx": (), "uvx": (), "pipx": ("install", "run"),
}

# Framework commands that wipe a database (program, first words).
DESTRUCTIVE_DB_COMMANDS: tuple[str, ...] = (
    "dropdb", "dropuser", "mysqladmin drop", "rails db:drop", "rails db:reset", "rails db:purge",
    "rails db:schema:load", "rake db:drop", "rake db:reset", "rake db:purge",
    "rake db:schema:load", "manage.py flush", "manage.py reset_db", "manage.py sqlflush",
    "django-admin flush", "prisma migrate reset", "sequelize db:drop", "knex migrate:rollback --all",
    "mongo --eval db.dropDatabase()", "typeorm schema:drop", "alembic downgrade base",
    "flask db downgrade base", "supabase db reset", "redis-cli flushall", "redis-cli flushdb",
)

# Shutting the machine down is never an agent's call.
POWER_COMMANDS: tuple[str, ...] = ("shutdown", "reboot", "halt", "poweroff", "telinit")

# policy/guardian.yaml `limits`: per-job caps the supervisor enforces from the observatory's counts
LIMIT_KEYS = ("max_api_calls", "max_file_operations", "max_tokens_per_session")
