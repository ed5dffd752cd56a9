import matplotlib
import numpy as np
import pytest
import trimesh
from PIL import Image

from ipcgrasp.grasp.outcome import GraspResult
from ipcgrasp.viz.render import (
    BODY_COLOURS,
    CONTACT_COLOUR,
    FORCE_COLOUR,
    VALUE_COLOURMAP,
    _canvas,
    camera_azimuth,
    lambert_shade,
    render_frame,
    render_stills,
    render_trial,
    still_paths,
    trial_phases,
)
from ipcgrasp.viz.view_options import parse_size


def _box(extents, centre):
    box = trimesh.creation.box(extents=extents)
    return box.vertices + np.asarray(centre), np.asarray(box.faces)


def _scene(lift=0.0, squeeze=0.0):
    """A 3 cm cube on the ground (raised by `lift`) between two 2.4 mm pads closing along y."""
    cube, cube_faces = _box((0.03, 0.03, 0.03), (0.0, 0.0, 0.015 + lift))
    pad0, pad_faces = _box((0.016, 0.0024, 0.022), (0.0, -0.0162 + squeeze, 0.015 + lift))
    pad1, _ = _box((0.016, 0.0024, 0.022), (0.0, 0.0162 - squeeze, 0.015 + lift))
    frame = {"time": 0.0, "object": cube, "pad0": pad0, "pad1": pad1}
    faces = {"object": cube_faces, "pad0": pad_faces, "pad1": pad_faces}
    return frame, faces


def _colour_pixels(image, colour, tolerance=0.12):
    """Pixels whose colour is a shade (any brightness) of `colour`."""
    rgb = image[..., :3].astype(float) / 255.0
    unit = np.asarray(colour) / np.linalg.norm(colour)
    norm = np.linalg.norm(rgb, axis=2)
    cosine = (rgb @ unit) / np.maximum(norm, 1e-9)
    return (norm > 0.15) & (cosine > np.cos(tolerance))


def test_render_frame_writes_a_png_showing_object_pads_and_ground(tmp_path):
    frame, faces = _scene()
    path = tmp_path / "frame.png"
    image = render_frame(frame, faces, path, phase="squeeze", size=(400, 300))
    assert image.shape == (300, 400, 3) and image.dtype == np.uint8
    with Image.open(path) as png:
        assert png.size == (400, 300)
        assert np.array_equal(np.asarray(png.convert("RGB")), image)
    not_white = np.any(image < 245, axis=2).mean()
    assert 0.2 < not_white < 0.95
    cube = _colour_pixels(image, BODY_COLOURS["object"])
    assert cube.mean() > 0.05
    assert not (cube[[0, -1]].any() or cube[:, [0, -1]].any())  # zoomed in, yet nothing cut off
    assert _colour_pixels(image, BODY_COLOURS["pad"]).mean() > 0.002
    grey = (np.ptp(image.astype(int), axis=2) < 8) & (image[..., 0] > 150) & (image[..., 0] < 235)
    assert grey.mean() > 0.05  # the ground tiles


def test_a_tall_scene_is_zoomed_to_fit():
    frame, faces = _scene()
    frame["object"] = frame["object"] * [1.0, 1.0, 4.0]  # a 12 cm tall box
    image = render_frame(frame, faces, size=(300, 300))
    cube = _colour_pixels(image, BODY_COLOURS["object"])
    rows = np.nonzero(cube.any(axis=1))[0]
    assert not (cube[[0, -1]].any() or cube[:, [0, -1]].any())
    assert rows[-1] - rows[0] > 0.6 * 300


def test_lifting_the_object_moves_it_up_in_the_picture():
    frame, faces = _scene()
    lifted, _ = _scene(lift=0.02)
    bounds = (np.array([-0.04, -0.04, -0.005]), np.array([0.04, 0.04, 0.06]))
    rows = []
    for f in (frame, lifted):
        mask = _colour_pixels(render_frame(f, faces, bounds=bounds, azimuth=-30.0, size=(300, 300)),
                              BODY_COLOURS["object"])
        rows.append(np.nonzero(mask)[0].mean())
    assert rows[1] < rows[0] - 20  # image rows grow downwards


def test_lambert_shading_is_brightest_facing_the_light():
    facing = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]]], dtype=float)  # normal +z
    grazing = np.array([[[0, 0, 0], [1, 0, 0], [0, 0, 1]]], dtype=float)  # normal -y
    light = np.array([0.0, 0.0, 1.0])
    bright = lambert_shade(facing, (1.0, 0.5, 0.0), light)[0]
    dim = lambert_shade(grazing, (1.0, 0.5, 0.0), light)[0]
    assert bright[0] == pytest.approx(1.0) and bright[1] == pytest.approx(0.5) and bright[3] == 1.0
    assert dim[0] < bright[0] and dim[0] > 0.2  # ambient light keeps it visible


def test_camera_looks_across_the_gap_from_the_pads_side():
    frame, _ = _scene()
    for shift in (0.02, -0.02):  # pads off-centre towards +x, then -x
        moved = dict(frame, pad0=frame["pad0"] + [shift, 0, 0], pad1=frame["pad1"] + [shift, 0, 0])
        azimuth = np.radians(camera_azimuth(moved))
        towards_camera = np.array([np.cos(azimuth), np.sin(azimuth)])
        assert np.sign(towards_camera[0]) == np.sign(shift)
        assert abs(towards_camera[1]) < 0.5  # mostly perpendicular to the closing direction y


SETTLE = 0.06  # s before the squeeze starts


def _trial(n_frames=3, success=True):
    frames = []
    for k in range(n_frames):
        frame, faces = _scene(lift=0.01 * k, squeeze=0.0005 * k)
        frame["time"] = SETTLE * (k + 0.5)
        frames.append(frame)
    return GraspResult(success=success, failure_mode=None if success else "slip", squeeze_time=SETTLE,
                       close_time=frames[1]["time"], frames=frames, faces=faces)


def test_render_trial_writes_a_gif_of_every_frame_and_the_stills(tmp_path):
    result = _trial()
    out = tmp_path / "trial.gif"
    paths = render_trial(result, out, fps=5, every=1, size=(320, 240))
    first, final = still_paths(out)
    assert (first.name, final.name) == ("trial_first.png", "trial_final.png")
    assert paths == {"gif": out, "first": first, "final": final, "frames": 3}
    with Image.open(out) as gif:
        assert gif.n_frames == 3 and gif.size == (320, 240)
        assert gif.info["duration"] == 200
    with Image.open(first) as a, Image.open(final) as b:
        assert a.size == b.size == (320, 240)
        assert not np.array_equal(np.asarray(a), np.asarray(b))


def test_render_trial_subsamples_but_keeps_the_last_frame(tmp_path):
    result = _trial(n_frames=6)
    paths = render_trial(result, tmp_path / "t.gif", every=4, size=(200, 150))
    assert paths["frames"] == 3  # frames 0, 4 and the last one, 5
    with Image.open(paths["final"]) as final:
        last = render_trial(_trial(n_frames=6), tmp_path / "all.gif", every=1, size=(200, 150))
        with Image.open(last["final"]) as reference:
            assert np.array_equal(np.asarray(final), np.asarray(reference))


def test_phases_follow_the_procedure_and_the_last_names_the_outcome():
    assert trial_phases(_trial(4)) == ["settle", "squeeze", "lift and hold", "end (success)"]
    assert trial_phases(_trial(3, success=False))[-1] == "end (failed: slip)"


def test_render_stills_puts_first_and_final_side_by_side(tmp_path):
    image = render_stills(_trial(), tmp_path / "pair.png", size=(300, 200))
    assert image.shape == (200, 600, 3)
    assert not np.array_equal(image[:, :300], image[:, 300:])


def test_a_trial_without_frames_is_refused(tmp_path):
    with pytest.raises(ValueError, match="record=.frames."):
        render_trial(GraspResult(), tmp_path / "x.gif")


def _plate_and_pad(gap=5e-5):
    """A 6 cm plate standing on its edge, turned 70 deg about z, and a 16 x 16 x 1 mm pad lying
    on its +normal side `gap` m away (touching, as the barrier leaves them); returns the frame,
    the faces and the plate's normal."""
    turn = np.radians(70.0)
    rotation = np.array([[np.cos(turn), -np.sin(turn), 0], [np.sin(turn), np.cos(turn), 0], [0, 0, 1]])
    normal = rotation[:, 0]
    plate = trimesh.creation.box(extents=(0.002, 0.06, 0.06))
    pad = trimesh.creation.box(extents=(0.001, 0.016, 0.016))
    plate_vertices = plate.vertices @ rotation.T + [0, 0, 0.04]
    pad_vertices = pad.vertices @ rotation.T + [0, 0, 0.04] + normal * (0.001 + 0.0005 + gap)
    frame = {"time": 0.0, "object": plate_vertices, "pad0": pad_vertices}
    faces = {"object": np.asarray(plate.faces), "pad0": np.asarray(pad.faces)}
    return frame, faces, normal


def test_the_nearer_body_hides_the_farther_where_they_overlap():
    frame, faces, normal = _plate_and_pad()
    bounds = (np.array([-0.04, -0.04, 0.0]), np.array([0.04, 0.04, 0.08]))
    pad_side = np.degrees(np.arctan2(normal[1], normal[0])) + 60.0  # oblique, from the pad's side
    for azimuth, pad_in_front in ((pad_side, True), (pad_side + 180.0, False)):
        pad_alone = render_frame({"time": 0.0, "pad0": frame["pad0"]}, {"pad0": faces["pad0"]}, bounds=bounds,
                                   azimuth=azimuth, size=(400, 400))
        silhouette = _colour_pixels(pad_alone, BODY_COLOURS["pad"])
        silhouette &= np.roll(silhouette, 1, 0) & np.roll(silhouette, -1, 0)  # inner pixels, not edges
        silhouette &= np.roll(silhouette, 1, 1) & np.roll(silhouette, -1, 1)
        assert silhouette.sum() > 500
        both = render_frame(frame, faces, bounds=bounds, azimuth=azimuth, size=(400, 400))
        front = BODY_COLOURS["pad"] if pad_in_front else BODY_COLOURS["object"]
        assert _colour_pixels(both, front)[silhouette].all()
        if not pad_in_front:  # the plate, 6 cm wide, hides the pad entirely
            assert not _colour_pixels(both, BODY_COLOURS["pad"]).any()


def test_contact_points_and_force_arrows_are_drawn_where_the_frame_puts_them():
    frame, faces = _scene()
    bounds = (np.array([-0.04, -0.04, 0.0]), np.array([0.04, 0.04, 0.04]))
    plain = render_frame(frame, faces, bounds=bounds, azimuth=-30.0, size=(300, 300))
    contacts = np.array([[0.0, -0.015, 0.015], [0.0, 0.015, 0.015]])
    marked = render_frame(dict(frame, contacts=contacts), faces, bounds=bounds, azimuth=-30.0, size=(300, 300))
    red = _colour_pixels(marked, CONTACT_COLOUR, tolerance=0.2) & ~_colour_pixels(plain, CONTACT_COLOUR, 0.2)
    rows, cols = np.nonzero(red)
    assert len(rows) > 10
    # the dots sit where the camera projects the contact points
    canvas = _canvas([frame], faces, -30.0, 30.0, (300, 300), 100, bounds)
    expected = canvas.camera.project(contacts)
    for col, row in expected:
        near = (np.abs(cols - col) < 5) & (np.abs(rows - row - (300 - canvas.camera.height)) < 5)
        assert near.sum() > 3
    forces = np.array([[0.0, 5.0, 0.0], [0.0, -5.0, 0.0]])
    arrows = render_frame(dict(frame, contacts=contacts, contact_forces=forces), faces, bounds=bounds,
                          azimuth=-30.0, size=(300, 300))
    assert _colour_pixels(arrows, FORCE_COLOUR, 0.2).sum() > _colour_pixels(marked, FORCE_COLOUR, 0.2).sum() + 50
    with pytest.raises(ValueError, match="contact_forces"):
        render_frame(dict(frame, contacts=contacts, contact_forces=forces[:1]), faces, size=(100, 100))


def test_face_values_colour_the_pad_on_one_scale_with_a_colour_bar():
    frame, faces = _scene()
    plain = render_frame(frame, faces, azimuth=-30.0, size=(300, 300))
    coloured = render_frame(dict(frame, face_values={"pad0": np.full(len(faces["pad0"]), 1e4),
                                                     "pad1": np.zeros(len(faces["pad1"]))}),
                            faces, azimuth=-30.0, size=(300, 300))
    assert _colour_pixels(plain, BODY_COLOURS["pad"]).sum() > 100
    assert _colour_pixels(coloured, BODY_COLOURS["pad"]).sum() < 0.2 * _colour_pixels(plain, BODY_COLOURS["pad"]).sum()
    yellow = matplotlib.colormaps[VALUE_COLOURMAP](1.0)[:3]  # the top of the scale: pad0's value
    assert _colour_pixels(coloured, yellow, 0.08).sum() > 50  # pad0 (shaded) and the colour bar's top
    with pytest.raises(ValueError, match="one value per surface triangle"):
        render_frame(dict(frame, face_values={"pad0": np.ones(3)}), faces, size=(100, 100))


def test_picture_size_parses_width_by_height():
    assert parse_size("640x480") == (640, 480)
    for bad in ("640", "ax3", "8x8"):
        with pytest.raises(ValueError, match="picture size"):
            parse_size(bad)


def test_elevation_moves_the_camera_up():
    frame, faces = _scene()
    low = render_frame(frame, faces, azimuth=-30.0, elevation=5.0, size=(300, 300))
    high = render_frame(frame, faces, azimuth=-30.0, elevation=80.0, size=(300, 300))
    ground = [((np.ptp(im.astype(int), axis=2) < 8) & (im[..., 0] > 150) & (im[..., 0] < 235)).mean()
              for im in (low, high)]
    assert ground[1] > ground[0] + 0.2  # looking down, the ground fills more of the picture


def test_contacts_behind_a_jaw_are_not_drawn_through_it():
    """Looking along the closing direction from pad 0's side, pad 1's contact lies behind pad 0:
    its dot is left out (the legend counts it) and pad 0's own contact, seen through its own pad,
    is drawn."""
    from ipcgrasp.viz.render import _canvas

    frame, faces = _scene()
    bounds = (np.array([-0.04, -0.04, 0.0]), np.array([0.04, 0.04, 0.04]))
    contacts = np.array([[0.0, -0.015, 0.015], [0.0, 0.015, 0.015]])
    canvas = _canvas([frame], faces, -90.0, 10.0, (300, 300), 100, bounds)
    canvas.shade(frame, faces)
    assert canvas._hidden_contacts(frame, contacts).tolist() == [False, True]
    side = _canvas([frame], faces, -30.0, 30.0, (300, 300), 100, bounds)  # both in sight past the cube's edge
    side.shade(frame, faces)
    assert side._hidden_contacts(frame, contacts).tolist() == [False, False]
    canvas.draw(dict(frame, contacts=contacts), faces, "")
    [dots] = [a for a in canvas.overlays if hasattr(a, "get_offsets")]
    assert len(dots.get_offsets()) == 1
    assert any("1 contact(s) behind a jaw, not drawn" in getattr(a, "get_text", lambda: "")()
               for a in canvas.overlays)
    only_hidden = canvas.draw(dict(frame, contacts=contacts[1:]), faces, "")  # nothing left to draw: no error
    assert only_hidden.shape == (300, 300, 3)
