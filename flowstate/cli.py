import click


@click.group()
def main() -> None:
    """FlowState."""
