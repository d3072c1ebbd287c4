"""`stackctl tls issue`: a certificate from an ACME CA (Let's Encrypt by default) via certbot."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from stackctl.commands._shared import load_stack

console = Console(highlight=False, soft_wrap=True)
tls_app = typer.Typer(no_args_is_help=True, help="HTTPS for the public endpoint (certbot + nginx).")


@tls_app.command()
def issue(
    ctx: typer.Context,
    domain: Annotated[str, typer.Option(help="The public DNS name (stack.yaml's `hostname`).")],
    email: Annotated[str, typer.Option(help="Contact for the CA's expiry notices.")],
    acme_server: Annotated[
        str | None, typer.Option(help="ACME directory URL of another CA (default: Let's Encrypt).")
    ] = None,
    staging: Annotated[bool, typer.Option("--staging", help="Let's Encrypt's staging CA (untrusted test certificates).")] = False,
) -> None:
    """Obtain a certificate through the running nginx (HTTP-01 webroot), then switch nginx to HTTPS.

    Renewals reload nginx: natively through the deploy hook certbot stores with the certificate (Debian's certbot.timer renews); under Compose the certbot service renews and nginx reloads itself twice a day.
    """
    from stackctl.tls import IssueRequest, issue_certificate

    stack = load_stack(ctx)
    with console.status(f"certbot: requesting a certificate for {domain}"):
        issued = issue_certificate(stack, IssueRequest(domain, email, acme_server, staging))
    console.print(f"[green]✓[/green] certificate for {issued.domain}: {issued.fullchain}")
    console.print(f"[green]✓[/green] nginx reloaded with HTTPS on port {stack.config.ports.https} "
                  f"(HTTP redirects there; ACME challenges stay on HTTP)")
    console.print(f"renewals run: {issued.renewal_hook}")


def register(app: typer.Typer) -> None:
    app.add_typer(tls_app, name="tls")
