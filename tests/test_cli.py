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
