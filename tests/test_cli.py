from ipcgrasp.cli import main


def test_objects_lists_registry(capsys):
    assert main(["objects"]) == 0
    out = capsys.readouterr().out
    assert "cube_3cm" in out and "3.0" in out


def test_data_where_reports_a_bad_directory_cleanly(tmp_path, capsys):
    assert main(["data", "where", "--data", str(tmp_path / "missing")]) == 2
    assert "ipcgrasp data fetch" in capsys.readouterr().err


def test_render_takes_the_camera_angles_and_the_picture_size():
    from ipcgrasp.cli import build_parser

    argv = ["render", "--object", "cube_3cm", "--grasp", "0", "--out", "x.png"]
    args = build_parser().parse_args(argv + ["--azimuth", "10", "--elevation", "45", "--size", "320x240"])
    assert (args.azimuth, args.elevation, args.size) == (10.0, 45.0, (320, 240))
    defaults = build_parser().parse_args(argv)
    assert (defaults.azimuth, defaults.elevation, defaults.size) == (None, 30.0, (640, 480))


def test_grippers_lists_each_shipped_description_on_one_line(capsys):
    assert main(["grippers"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["franka_hand", "robotiq_2f85", "yumi"]
    yumi = lines[2].split("\t")
    assert yumi[1:4] == ["stroke 50 mm", "force 100 N", "pads rounded*, rectangular"]
    assert yumi[4].startswith("source: REACH")


def test_a_bad_gripper_name_lists_the_valid_ones_before_any_work(capsys):
    argv = ["simulate", "--object", "cube_3cm", "--grasp", "0", "--gripper", "panda"]
    assert main(argv) == 2
    assert "unknown gripper 'panda'; fix: use one of the shipped grippers (franka_hand, robotiq_2f85, yumi)" in \
        capsys.readouterr().err
    assert main(["generate", "--mesh", "x.obj", "--mass", "0.1", "--n", "1", "--out", "o", "--gripper", "yumi",
                 "--jaw", "oval"]) == 2
    assert "gripper 'yumi' has no pad 'oval'; fix: choose one of its pads (rounded, rectangular)" in \
        capsys.readouterr().err


def test_gripper_and_jaw_reach_every_trial_command():
    from ipcgrasp.cli import build_parser

    for command in (["simulate", "--object", "c", "--grasp", "0"], ["render", "--object", "c", "--grasp", "0",
                                                                     "--out", "x.png"],
                    ["quality", "--object", "c", "--grasp", "0"],
                    ["generate", "--mesh", "m.obj", "--mass", "1", "--n", "1", "--out", "o"]):
        args = build_parser().parse_args(command + ["--gripper", "franka_hand"])
        assert args.gripper == "franka_hand" and args.jaw is None


def test_view_refuses_a_port_out_of_range_before_any_work(tmp_path, capsys):
    import pytest

    for port in ("99999", "-1"):
        with pytest.raises(SystemExit) as exit_:
            main(["view", str(tmp_path / "never_read.nc"), "--port", port])
        assert exit_.value.code == 2
        assert "--port" in capsys.readouterr().err


def test_view_refuses_an_unknown_host_or_a_busy_port_naming_the_option_and_the_fix(tmp_path, capsys):
    """Checked before the trajectory is read (the file here does not exist) and before a server
    thread starts, so the command returns at once instead of waiting forever."""
    import socket

    assert main(["view", str(tmp_path / "never_read.nc"), "--host", "bogus.invalid"]) == 2
    err = capsys.readouterr().err
    assert "--host bogus.invalid" in err and "fix:" in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["view", str(tmp_path / "never_read.nc"), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"--port {port}" in err and "another --port" in err


def test_render_refuses_bad_angles_and_sizes_before_any_simulation(capsys):
    import pytest

    argv = ["render", "--object", "cube_3cm", "--grasp", "0", "--out", "x.png"]
    for option, value, words in (("--azimuth", "inf", "azimuth must be a finite angle"),
                                 ("--azimuth", "nan", "azimuth must be a finite angle"),
                                 ("--elevation", "nan", "elevation must lie strictly between"),
                                 ("--elevation", "90", "elevation must lie strictly between"),
                                 ("--size", "20000x20000", "picture size must be from 16x16 to 8192x8192")):
        with pytest.raises(SystemExit) as exit_:
            main(argv + [option, value])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert option in err and words in err, err


HEAVY = ("numba", "xarray", "pandas", "trimesh", "scipy", "matplotlib", "numpy")
"""Modules that cost seconds of CPU together: neither `import ipcgrasp` nor the command line's help,
version and argument errors may load them."""

_CLI = """
from ipcgrasp.cli import main
try:
    main({argv!r})
except SystemExit as exit_:
    assert exit_.code == {code}, exit_.code
"""


def _heavy_modules_after(code: str) -> list[str]:
    """The HEAVY modules loaded in a fresh interpreter once `code` has run there."""
    import subprocess
    import sys

    script = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])


def test_import_ipcgrasp_and_its_names_stays_light():
    assert _heavy_modules_after("import ipcgrasp; dir(ipcgrasp); ipcgrasp.__version__") == []


def test_help_version_and_argument_errors_load_no_heavy_module():
    render = ["render", "--object", "x", "--grasp", "0", "--out", "x.gif"]
    simulate = ["simulate", "--object", "x", "--grasp", "0"]
    for argv, code in ((["--help"], 0), (["--version"], 0), (["render", "--help"], 0), (["generate", "--help"], 0), (["export", "--help"], 0), (["frames", "--help"], 0),
                       (render + ["--azimuth", "inf"], 2), (render + ["--size", "1x1"], 2),
                       (simulate + ["--close-rule", "zzz"], 2), (simulate + ["--render", "out.txt"], 2),
                       (["quality", "--object", "x", "--grasp", "0", "--resolution", "-1"], 2), ([], 2)):
        assert _heavy_modules_after(_CLI.format(argv=argv, code=code)) == [], argv


def test_the_public_names_resolve_on_first_use():
    import pytest

    import ipcgrasp
    from ipcgrasp import GraspObject, Gripper, SimParams, robustness, shipped_grippers, simulate_grasp
    from ipcgrasp.grasp.simulate import simulate_grasp as defined

    assert simulate_grasp is defined and ipcgrasp.simulate_grasp is defined
    assert {GraspObject.__name__, Gripper.__name__, SimParams.__name__, robustness.__name__,
            shipped_grippers.__name__} == {"GraspObject", "Gripper", "SimParams", "robustness", "shipped_grippers"}
    assert set(ipcgrasp.__all__) <= set(dir(ipcgrasp)) and isinstance(ipcgrasp.__version__, str)
    with pytest.raises(AttributeError, match="no attribute 'simulate'"):
        ipcgrasp.simulate  # noqa: B018


def test_only_the_process_own_command_freezes_the_garbage_collector_after_it(monkeypatch, capsys):
    import gc
    import sys

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    assert main(["grippers"]) == 0
    assert frozen == []  # a caller that goes on (the tests) keeps its collector as it was
    monkeypatch.setattr(sys, "argv", ["ipcgrasp", "grippers"])
    assert main() == 0
    assert frozen == [True]


def test_simulate_start_up_pauses_the_collector_and_freezes_only_in_its_own_process(monkeypatch):
    import argparse
    import gc

    from ipcgrasp.cli import _start_up

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    for owns_process, expected in ((False, []), (True, [True])):
        frozen.clear()
        with _start_up(argparse.Namespace(owns_process=owns_process)):
            assert not gc.isenabled()
        assert gc.isenabled() and frozen == expected
    gc.disable()
    try:
        frozen.clear()
        with _start_up(argparse.Namespace(owns_process=True)):
            pass
        assert not gc.isenabled() and frozen == []  # a collector its caller paused stays paused
    finally:
        gc.enable()
