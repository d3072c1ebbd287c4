"""TLS: `stackctl tls issue` gets a certificate with certbot through the running nginx, then
renders the HTTPS server block and reloads nginx; renewals reload nginx the runtime's way."""

from stackctl.tls.certbot import IssuedCertificate, IssueRequest, certbot_command, issue_certificate
from stackctl.tls.nginx import render_nginx_site

__all__ = ["IssueRequest", "IssuedCertificate", "certbot_command", "issue_certificate", "render_nginx_site"]
