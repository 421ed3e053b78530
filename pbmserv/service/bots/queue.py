"""Which bot turn is thought out next: fair across the players who wait.

The bots think one turn at a time (one core, in `serve` in the idle
scheduling class). Thinking the due turns in the order the boards were
read let one account with many strong boards, answering each bot move at
once, hold every other player's turn up behind a series of 4.5 s thinks
(issue 35, F7). So:

- **Accounts take turns.** After each think the due turns are read anew,
  and the next is the one waiting longest of the account served least
  recently (the board's human player, `Turn.player`): an account with many
  boards due gets one turn in each round, as one with a single board does.
- **Cheaper turns are thought in the pauses of a dearer think.** Every
  LOOK_SECONDS a think looks, if something woke the bots since (a worker
  batch that may have made a turn due), whether a turn of a cheaper
  strength came due for another account, and if so thinks it out and hands
  it in there and then, accounts again taking turns, for at most as long
  as the dear think has run itself: an easy turn never waits behind a
  strong think, and a strong think keeps at least half of the bots' time.
  The dear think's budget counts only its own time (`_ThinkClock`), so it
  plays as strongly as it would have alone; it ends later.
- **A think of a bots process asked to stop is dropped** (`Stopped`, raised
  from its clock): nothing of it was handed in, and the next runner thinks
  the turn anew.

Each answer or move is handed in through intake as soon as it is thought
(`on_hand_in` wakes the worker to play it). What was handed in is not
thought out again while the board still shows it due; it is played once
whatever happens (`service.bot_turns`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pbmserv.gamekit.search import STRENGTHS
from pbmserv.service.bots.manners import SearchClock
from pbmserv.service.bots.turns import Turn, answer_mail, due, judge_proposal, think, turn_mail
from pbmserv.service.intake.arrival import Clock, Intake
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store.database import reading

if TYPE_CHECKING:
    from pbmserv.store.handles import Engine

log = logging.getLogger(__name__)

#: how often (seconds of the bots' time) a think looks whether cheaper turns came due
LOOK_SECONDS = 0.05


class Stopped(Exception):
    """The bots are asked to stop: the think under way is dropped, and thought anew by the next runner."""


def _never() -> bool:
    return False


def _nothing() -> None:
    pass


class BotQueue:
    """The bots' due turns, thought out one at a time in a fair order (see
    the module), each handed in through `intake` as soon as it is thought.
    `woken()` tells whether something may have made a turn due since it was
    last asked (in `serve`, a worker batch); `stopping()` whether to drop
    the think under way; `timer` is what thinks are timed on."""

    def __init__(
        self, engine: Engine, intake: Intake, catalog: Catalog, clock: Clock, *, iterations: int | None = None,
        woken: Callable[[], bool] = _never, stopping: Callable[[], bool] = _never,
        on_hand_in: Callable[[], None] = _nothing, timer: SearchClock = time.perf_counter,
    ):
        self.engine, self.intake, self.catalog, self.clock = engine, intake, catalog, clock
        self.iterations = iterations
        self.woken, self.stopping, self.on_hand_in, self.timer = woken, stopping, on_hand_in, timer
        #: what was handed in (`Turn.due_key`) and not yet played: not to be thought out again
        self.handed_in: set[str] = set()
        #: thinks that failed this run (logged): tried again in the next, not over and over in this one
        self._failed: set[str] = set()
        #: each account's place in the rotation: the count of turns handed in when its last one was
        self._served: dict[str, int] = {}
        self._handed = 0
        #: the thinks under way, the one lending its pauses last
        self._thinking: list[Turn] = []
        #: how many times `woken()` said yes: a think looks again when this grew since its last look
        self.wakes = 0

    def run(self, *, only_due_now: bool = False) -> int:
        """Think out and hand in the due turns, one at a time, the next
        chosen afresh after each, until none is due (with `only_due_now`,
        none of those due when it began); returns how many were handed in.
        Raises Stopped when asked to stop in the middle of a think."""
        among = {turn.due_key for turn in self._due()} if only_due_now else None
        before = self._handed
        try:
            while not self.stopping() and (turn := self._next(among)) is not None:
                self._serve(turn)
        finally:
            self._failed.clear()
        return self._handed - before  # those thought in the pauses of others too

    def _due(self) -> list[Turn]:
        """The turns due now that are neither handed in nor failed in this run."""
        with reading(self.engine) as connection:
            turns = due(connection, self.catalog, self.intake.key, self.intake.settings.address)
        keys = {turn.due_key for turn in turns}
        self.handed_in &= keys  # a turn played changed its board, and its key never comes back
        return [turn for turn in turns if turn.due_key not in self.handed_in and turn.due_key not in self._failed]

    def _next(self, among: set[str] | None = None, cheaper_than: Turn | None = None) -> Turn | None:
        """The due turn to think out next: of the account served least
        recently, the one waiting longest; with `cheaper_than`, only turns
        of a cheaper strength whose account has no think under way."""
        turns = self._due()
        if among is not None:
            turns = [turn for turn in turns if turn.due_key in among]
        if cheaper_than is not None:
            busy = {turn.player for turn in self._thinking}
            turns = [turn for turn in turns if turn.cost < cheaper_than.cost and turn.player not in busy]
        return min(turns, key=lambda turn: (self._served.get(turn.player, 0), turn.record.updated_at), default=None)

    def _serve(self, turn: Turn) -> None:
        """Think the turn out and hand it in; a think that fails is logged,
        and tried again in the next run."""
        clock = _ThinkClock(self, turn)
        self._thinking.append(turn)
        began = self.timer()
        try:
            if turn.answers_proposal:
                answer = judge_proposal(turn, iterations=self.iterations, clock=clock)
                what, mail = f"answers {turn.answer_key}: {answer}", answer_mail(turn, answer, self.clock())
            else:
                move = think(turn, self.engine, iterations=self.iterations, clock=clock)
                what, mail = f"move {turn.number}: {move}", turn_mail(turn, move, self.clock())
        except Stopped:
            raise
        except Exception:
            log.exception("%s on %s board %s: the think failed; tried again later", turn.userid, turn.game.name, turn.record.board)
            self._failed.add(turn.due_key)
            return
        finally:
            self._thinking.pop()
        log.info(
            "%s on %s board %s for %s, %s (thought %.2f s, %.2f s more for other players' turns)",
            turn.userid, turn.game.name, turn.record.board, turn.player or "nobody", what, self.timer() - began - clock.lent, clock.lent,
        )
        self.intake.accept([(mail, None, turn.reply_to)])
        self.handed_in.add(turn.due_key)
        self._handed += 1
        self._served[turn.player] = self._handed
        self.on_hand_in()

    def check_stop(self) -> None:
        if self.stopping():
            raise Stopped

    def lend(self, think: _ThinkClock, allowance: float) -> float:
        """Cheaper turns of other accounts, thought out in a pause of
        `think` while `allowance` (seconds) lasts, at its first look, and
        later ones if something woke the bots since its last look or that
        look was cut short; the seconds they took."""
        self.check_stop()
        if self.woken():
            self.wakes += 1
        if allowance <= 0 or not (think.look_again or self.wakes > think.looked_at):
            return 0.0
        began = self.timer()
        think.looked_at, think.look_again = self.wakes, False
        while (cheaper := self._next(cheaper_than=think.turn)) is not None:
            self._serve(cheaper)
            if self.timer() - began >= allowance:
                think.look_again = True
                break
        return self.timer() - began


class _ThinkClock:
    """A think's own time, which its search's budget counts: the seconds
    since it began less those lent to cheaper turns in its pauses
    (`BotQueue.lend`, every LOOK_SECONDS, at most as many as its own)."""

    def __init__(self, queue: BotQueue, turn: Turn):
        self.queue, self.turn = queue, turn
        self.began = queue.timer()
        self.lent = 0.0
        self.next_look = self.began + LOOK_SECONDS
        #: `BotQueue.wakes` at this think's last look, and whether to look again anyway: at
        #: its first look (cheaper turns may have come due before it began), or after a
        #: look that stopped with turns left
        self.looked_at = queue.wakes
        self.look_again = True
        #: the cheapest strength's thinks lend nothing: they only look whether to stop
        self.lends = turn.cost > min(strength.seconds for strength in STRENGTHS.values())

    def __call__(self) -> float:
        now = self.queue.timer()
        if now >= self.next_look and not self.lends:
            self.queue.check_stop()
            self.next_look = now + LOOK_SECONDS
        elif now >= self.next_look:
            own = now - self.began - self.lent
            self.lent += self.queue.lend(self, own - self.lent)
            now = self.queue.timer()
            self.next_look = now + LOOK_SECONDS
        return now - self.lent


def play_due_turns(engine: Engine, intake: Intake, catalog: Catalog, clock: Clock, *, iterations: int | None = None) -> int:
    """Think out and hand in every bot answer and move due now, accounts
    taking turns; returns how many (`pbmserv bots --once` does this, the
    tests and transcripts with `iterations`, which fixes the search's size
    and with it the moves)."""
    return BotQueue(engine, intake, catalog, clock, iterations=iterations).run(only_due_now=True)
