"""Random full games of Parliament per chamber option.

Run: .venv/bin/python bench/bench_parliament.py [seconds per option set]
"""

from random_games import main

from games.parliament import Parliament

if __name__ == "__main__":
    main([(Parliament(), {"boards": boards}) for boards in ("upper", "lower", "both")])
