// Proves that the configured database exists and answers, not just the server.
RETURN 1 AS ok
