from ipcgrasp.cli import main


def test_objects_lists_registry(capsys):
    assert main(["objects"]) == 0
    out = capsys.readouterr().out
    assert "cube_3cm" in out and "3.0" in out


def test_data_where_reports_a_bad_directory_cleanly(tmp_path, capsys):
    assert main(["data", "where", "--data", str(tmp_path / "missing")]) == 2
    assert "ipcgrasp data fetch" in capsys.readouterr().err
