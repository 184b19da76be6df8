"""`python -m coworkenv`: the `coworkenv` command, for launchers that start a module (`accelerate launch -m coworkenv ...`)."""

from coworkenv.cli import main

if __name__ == "__main__":
    main()
