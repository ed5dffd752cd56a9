"""The trial commands' progress bars show the time left from the mean time per finished trial."""

import io

from rich.console import Console

from ipcgrasp.progress import eta_text, trial_progress


def test_eta_is_the_mean_time_per_step_times_the_steps_left():
    assert eta_text(20.0, 2, 10) == "ETA 1:20"
    assert eta_text(3600.0, 1, 3) == "ETA 2:00:00"
    assert eta_text(5.0, 0, 10) == "ETA -"  # nothing finished yet
    assert eta_text(5.0, 3, None) == ""  # a task without a total (one sequential trial)
    assert eta_text(50.0, 10, 10) == ""  # done


def test_the_generate_bar_shows_its_eta():
    """`generate` and a parallel `simulate` advance one bar per finished trial: it shows the ETA."""
    clock = [0.0]
    out = io.StringIO()
    with trial_progress(console=Console(file=out, width=120, force_terminal=True), get_time=lambda: clock[0],
                        auto_refresh=False) as bar:
        task = bar.add_task("box: 5 grasp(s) x 2 trial(s)", total=10, status="")
        clock[0] = 30.0
        bar.update(task, advance=3, status="grasp 1: success")
        bar.refresh()
        assert "ETA 1:10" in out.getvalue()
