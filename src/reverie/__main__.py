"""``python -m reverie``: the command line, exactly as the ``reverie`` console script runs it."""

from reverie.cli import main

if __name__ == "__main__":
    main()
