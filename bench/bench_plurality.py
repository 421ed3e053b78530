"""Random full games of Plurality per option set (pass included).

Run: .venv/bin/python bench/bench_plurality.py [seconds per option set]
"""

from random_games import main

from games.plurality import Plurality

OPTION_SETS = (
    {"size": "13"},
    {"size": "19"},
    {"size": "13", "ties": "parity"},
    {"board": "hex", "size": "5"},
    {"board": "hex", "size": "8"},
    {"board": "hex", "size": "9"},
)

if __name__ == "__main__":
    main([(Plurality(), options) for options in OPTION_SETS])
