"""Code inside commands: Python, JS/Ruby/Perl/PHP, SQL, scripts written then run, build files, hosted APIs."""
