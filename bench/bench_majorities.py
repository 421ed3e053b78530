"""Random full games of Majorities per board size.

Run: .venv/bin/python bench/bench_majorities.py [seconds per option set]
"""

from random_games import main

from games.majorities import Majorities

if __name__ == "__main__":
    main([(Majorities(), {"size": size}) for size in ("3", "5", "7")])
