"""The progress bars of the trial commands (`simulate`, `render`, `generate`): a spinner, the
task, a bar, its status, the time elapsed and, for a task that knows its total, the time left.

The time left is the mean time per finished step so far times the steps left, over the whole
run: the trials of one command take similar times, and rich's own estimate (steps in the last
30 s) has nothing to go on while a trial takes longer than that. Light module: rich only.
"""

from __future__ import annotations

from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text


def eta_text(elapsed: float | None, completed: float, total: float | None) -> str:
    """"ETA m:ss" (h:mm:ss past an hour) from the mean time per step; "ETA -" before the first
    step; "" without a total (nothing to count down to) or once done."""
    if total is None or completed >= total:
        return ""
    if not completed or elapsed is None:
        return "ETA -"
    seconds = round(elapsed / completed * (total - completed))
    hours, rest = divmod(seconds, 3600)
    return f"ETA {hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"ETA {rest // 60}:{rest % 60:02d}"


class EtaColumn(ProgressColumn):
    """The time left of a task with a total (`eta_text`)."""

    def render(self, task: Task) -> Text:
        return Text(eta_text(task.elapsed, task.completed, task.total), style="progress.remaining")


def trial_progress(**options) -> Progress:
    """The trial commands' Progress (module docstring); `options` go to rich's Progress."""
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    TextColumn("{task.fields[status]}"), TimeElapsedColumn(), EtaColumn(), **options)
