"""Random full games of Majority and Psychomachia per option set.

Run: .venv/bin/python bench/bench_majority.py [seconds per option set]
"""

from random_games import main

from games.majority import Majority, Psychomachia

if __name__ == "__main__":
    main([(game, options) for game in (Majority(), Psychomachia()) for options in ({"size": "6"}, {}, {"size": "14"})])
