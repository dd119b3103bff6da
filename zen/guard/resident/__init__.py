"""The resident guardian (`zen guard serve`): its server, the hook's thin client, the wire format."""
