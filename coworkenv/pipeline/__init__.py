"""One plain function per pipeline stage; the DAGs and the CLI only wire these together."""
