"""Deployment controls: redaction before persistence, retention, approval of consequential calls."""
