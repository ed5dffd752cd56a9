"""Image-space quality measure (Tan et al., section III) on hand-made silhouettes with known
feature values, and the silhouette renderer on the 3 cm cube."""

import math

import numpy as np
import pytest
import shapely
import trimesh
from shapely.geometry import Polygon

from ipcgrasp.baselines.image_quality import (
    ANGLE_THRESHOLD,
    FEATURE_NAMES,
    K_MIN,
    YUMI_OPENING,
    YUMI_PAD_WIDTH,
    Silhouette,
    grasp_quality,
    image_quality,
    render_silhouette,
)
from ipcgrasp.data.location import resolve_data_dir

MM = 1e-3
RES = 0.25 * MM
N_PIX = 400  # 100 mm square image centred on the gripper
W, R = YUMI_PAD_WIDTH, YUMI_OPENING
DEG = math.pi / 180


def pixel_centres(n=N_PIX, res=RES):
    """Pixel-centre coordinates X, Y (m) of an n x n image whose pixel edges are multiples of res."""
    c = (np.arange(n) + 0.5) * res - n * res / 2
    return np.meshgrid(c, c)


def silhouette(mask, res=RES):
    return Silhouette(mask, res, (-mask.shape[1] * res / 2, -mask.shape[0] * res / 2))


def rectangle(cx=0.0, cy=0.0, half_x=10 * MM, half_y=20 * MM, angle=0.0):
    """Rectangle centred at (cx, cy), rotated by `angle` (rad, counter-clockwise)."""
    X, Y = pixel_centres()
    x, y = X - cx, Y - cy
    u = x * math.cos(angle) + y * math.sin(angle)
    v = -x * math.sin(angle) + y * math.cos(angle)
    return silhouette((np.abs(u) < half_x) & (np.abs(v) < half_y))


def wedge(alpha, half_x=10 * MM, half_y=20 * MM, one_sided=False):
    """Trapezoid narrowing towards +y: each side leans inwards by `alpha` (rad) from the y axis."""
    X, Y = pixel_centres()
    lean = Y * math.tan(alpha)
    left = X > -half_x + lean
    right = X < (half_x if one_sided else half_x - lean)
    return silhouette(left & right & (np.abs(Y) < half_y))


@pytest.fixture(scope="module")
def cube():
    return trimesh.load(resolve_data_dir() / "object_meshes" / "cube_3cm.obj", process=False)


def top_down(x=0.0, y=0.0, z=0.2, yaw=0.0):
    """Gripper pose looking down (-world z) from (x, y, z), its x axis at `yaw` from world x."""
    c, s = math.cos(yaw), math.sin(yaw)
    pose = np.eye(4)
    pose[:3, :3] = np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, -1.0]])
    pose[:3, 3] = (x, y, z)
    return pose


def assert_combined_score(q, k=K_MIN):
    scores = np.array([q.feature_scores[name] for name in FEATURE_NAMES])
    assert np.all((scores >= 0) & (scores <= 1))
    low = scores.min()
    assert q.score == pytest.approx(k * low + (1 - k) * (scores.sum() - low) / 5, abs=1e-12)


# --- the six features on shapes with known values --------------------------------------------


def test_centred_rectangle_is_a_perfect_grasp():
    q = grasp_quality(rectangle())
    n = round(W / RES)
    assert q.grpv.shape == (2, n)
    np.testing.assert_allclose(q.grpv[0], -10 * MM, atol=1e-15)
    np.testing.assert_allclose(q.grpv[1], 10 * MM, atol=1e-15)
    assert not q.miss and not q.collision
    assert q.d_t == pytest.approx(0, abs=1e-12)
    assert q.r_r == 0.0
    assert q.s_a == pytest.approx(0, abs=1e-9)
    assert q.s_f == pytest.approx(0, abs=1e-15)
    assert q.contact.all()  # a flat face: every grasp point is a contact point
    np.testing.assert_allclose(q.offsets, np.linspace(-W / 2, W / 2, n), atol=1e-15)
    assert q.score == pytest.approx(1.0, abs=1e-9)
    assert_combined_score(q)


@pytest.mark.parametrize("offset", [2 * MM, -5 * MM, 7.3 * MM, 12.1 * MM])
def test_off_centre_grasp_predicts_the_translation(offset):
    """D_t = 2 |offset| / r: the object's centre travels to the grasp centre."""
    q = grasp_quality(rectangle(cx=offset))
    assert q.d_t == pytest.approx(2 * abs(offset) / R, abs=2 * RES / R)
    assert q.translation == pytest.approx(abs(offset), abs=RES)
    assert q.feature_scores["D_t"] == pytest.approx(1 - q.d_t, abs=1e-12)
    assert q.r_r == 0.0 and q.s_a == pytest.approx(0, abs=1e-9)
    # Moving the grasp instead of the object gives the same prediction.
    q_moved = grasp_quality(rectangle(), centre=(-offset, 0.0))
    assert q_moved.d_t == pytest.approx(q.d_t, abs=2 * RES / R)
    assert_combined_score(q)


@pytest.mark.parametrize("theta", [0.3, -1.1, 2.5])
def test_rotated_grasp_on_rotated_rectangle(theta):
    """A grasp turned by theta on a rectangle turned by theta is the axis-aligned case."""
    offset = 4 * MM
    centre = (-offset * math.cos(theta), -offset * math.sin(theta))
    q = grasp_quality(rectangle(angle=theta), centre=centre, theta=theta)
    assert not q.miss and not q.collision
    assert q.d_t == pytest.approx(2 * offset / R, abs=2 * RES / R)
    assert q.r_r < 2 * DEG
    assert q.s_a < 2 * DEG


@pytest.mark.parametrize("alpha_deg", [8.0, 20.0, 35.0])
def test_wedge_contact_angle(alpha_deg):
    """A symmetric wedge: every contact angle is alpha with one sign, S_a = alpha, no rotation."""
    alpha = alpha_deg * DEG
    q = grasp_quality(wedge(alpha))
    assert q.s_a == pytest.approx(alpha, abs=2 * DEG)
    betas = q.contact_angle[q.contact]
    assert np.all(betas > 0)  # outward normals point to +y on both sides
    assert np.all(np.isnan(q.contact_angle[~q.contact]))
    assert q.r_r == 0.0
    assert q.d_t == pytest.approx(0, abs=1e-12)
    assert q.feature_scores["S_a"] == pytest.approx(1 - q.s_a / ANGLE_THRESHOLD, abs=1e-12)
    # The jaws touch the wide end (-y) first: the force zones sit at the pad's lower edge.
    assert np.all(q.offsets[q.contact.any(axis=0)] < 0)


def test_one_sided_wedge_averages_the_sides():
    alpha = 20 * DEG
    q = grasp_quality(wedge(alpha, one_sided=True))
    assert q.s_a == pytest.approx(alpha / 2, abs=1 * DEG)


def test_diamond_contact_angles_of_both_signs_do_not_slip():
    """A vertex facing each jaw: contact angles of both signs on a side, SI != 0, S_a = 0."""
    X, Y = pixel_centres()
    q = grasp_quality(silhouette(np.abs(X) < 10 * MM - np.abs(Y) * math.tan(40 * DEG)))
    for side in range(2):
        betas = q.contact_angle[side][q.contact[side]]
        assert betas.min() < 0 < betas.max()
    assert q.s_a == 0.0
    assert q.r_r == 0.0


@pytest.mark.parametrize("phi_deg", [4.0, 12.0, 30.0])
def test_rotated_rectangle_rotation_and_contact_angle(phi_deg):
    """The jaws touch opposite ends of a rectangle turned by phi: it turns by phi (R_r) and the
    contact angles are phi, of opposite signs on the two sides."""
    phi = phi_deg * DEG
    q = grasp_quality(rectangle(half_y=40 * MM, angle=phi))
    assert q.r_r == pytest.approx(phi, abs=2 * DEG)
    assert q.s_a == pytest.approx(phi, abs=2 * DEG)
    assert np.all(q.contact_angle[0][q.contact[0]] < 0)
    assert np.all(q.contact_angle[1][q.contact[1]] > 0)
    # Counter-clockwise turn: the left jaw touches the top of the pad, the right jaw the bottom.
    assert np.all(q.offsets[q.contact[0]] > 0) and np.all(q.offsets[q.contact[1]] < 0)
    assert q.d_t == pytest.approx(0, abs=2 * RES / R)
    assert_combined_score(q)


def test_force_zone_offset():
    """Object under the upper half of the pad only: S_f = centre of the upper lines ~ w/4 -> 0.7."""
    q = grasp_quality(rectangle(cy=10 * MM, half_y=10 * MM))
    upper = q.offsets[q.offsets > 0]
    assert q.s_f == pytest.approx((upper.min() + upper.max()) / 2, abs=1e-15)
    assert q.s_f == pytest.approx(W / 4, abs=W / 2 / 63)
    assert q.feature_scores["S_f"] == pytest.approx(0.7, abs=0.015)  # S_f is half a line above w/4
    assert not q.miss  # only part of the lines miss
    np.testing.assert_array_equal(q.grpv[0, q.offsets < 0], -R)
    np.testing.assert_array_equal(q.grpv[1, q.offsets < 0], R)
    # Only the top grasp line touches: S_f = w/2, score 0.
    q_edge = grasp_quality(rectangle(cy=20 * MM, half_y=12.1 * MM))
    assert q_edge.contact.sum(axis=1).tolist() == [1, 1]
    assert q_edge.s_f == pytest.approx(W / 2, abs=1e-15)
    assert q_edge.feature_scores["S_f"] == pytest.approx(0, abs=1e-12)
    # Below w/4 the first slope: 1 - 0.3 S_f / (w/4).
    q_low = grasp_quality(rectangle(cy=9 * MM, half_y=11 * MM))
    assert 0 < q_low.s_f < W / 4
    assert q_low.feature_scores["S_f"] == pytest.approx(1 - 0.3 * q_low.s_f / (W / 4), abs=1e-12)
    # Between w/4 and w/2 the second slope: 0.7 (w/2 - S_f) / (w/4).
    q_mid = grasp_quality(rectangle(cy=15 * MM, half_y=9 * MM))
    assert W / 4 < q_mid.s_f < W / 2
    assert q_mid.feature_scores["S_f"] == pytest.approx(0.7 * (W / 2 - q_mid.s_f) / (W / 4), abs=1e-12)


# --- miss and collision: the paper's abnormal grasp distances -----------------------------------


@pytest.mark.parametrize("where", [(0.0, 20 * MM), (35 * MM, 0.0)])
def test_miss(where):
    """Beside the pads, or beyond the open jaws: no line meets the object, GRPV = (-r, r)."""
    q = grasp_quality(rectangle(cx=where[0], cy=where[1], half_x=8 * MM, half_y=8 * MM))
    np.testing.assert_array_equal(q.grpv[0], -R)
    np.testing.assert_array_equal(q.grpv[1], R)
    assert q.miss and not q.collision
    assert not q.contact.any()
    assert all(math.isnan(v) for v in (q.d_t, q.r_r, q.s_a, q.s_f))
    assert q.feature_scores["D_m"] == 0.0 and q.feature_scores["D_c"] == 1.0
    assert q.score == pytest.approx((1 - K_MIN) * 1 / 5, abs=1e-12)
    assert_combined_score(q)


def test_collision_object_wider_than_the_opening():
    q = grasp_quality(rectangle(half_x=30 * MM))
    np.testing.assert_array_equal(q.grpv[0], -2 * R)
    np.testing.assert_array_equal(q.grpv[1], 3 * R)
    assert q.collision and not q.miss
    assert math.isnan(q.d_t)
    assert q.score == pytest.approx((1 - K_MIN) * 1 / 5, abs=1e-12)


@pytest.mark.parametrize("side", ["left", "right"])
def test_one_sided_collision(side):
    """One jaw lands on the object: that side is abnormal (-2r or 3r), D_c = 1 either way."""
    X, Y = pixel_centres()
    inside = (X < 5 * MM) if side == "left" else (X > -5 * MM)
    q = grasp_quality(silhouette(inside & (np.abs(Y) < 20 * MM)))
    if side == "left":
        np.testing.assert_array_equal(q.grpv[0], -2 * R)
        np.testing.assert_allclose(q.grpv[1], 5 * MM, atol=1e-15)
    else:
        np.testing.assert_allclose(q.grpv[0], -5 * MM, atol=1e-15)
        np.testing.assert_array_equal(q.grpv[1], 3 * R)
    assert q.collision and not q.miss
    assert q.score < 0.1


def test_collision_on_some_lines_keeps_the_other_features():
    """A wide part under the pad's lower half only: a collision, features from the other lines."""
    X, Y = pixel_centres()
    mask = ((np.abs(X) < 10 * MM) & (np.abs(Y) < 20 * MM)) | ((np.abs(X) < 30 * MM) & (Y < -4 * MM))
    q = grasp_quality(silhouette(mask))
    assert q.collision and not q.miss
    np.testing.assert_array_equal(q.grpv[0, q.offsets < -4 * MM], -2 * R)
    assert q.d_t == pytest.approx(0, abs=1e-12)
    assert q.score <= 1 - K_MIN


# --- the score ---------------------------------------------------------------------------------


def test_score_is_monotone_in_translation_rotation_and_slope():
    translated = [grasp_quality(rectangle(cx=d)).score for d in np.array([0, 2, 5, 9, 14]) * MM]
    rotated = [grasp_quality(rectangle(half_y=40 * MM, angle=a)).score for a in np.array([0, 5, 15, 30]) * DEG]
    sloped = [grasp_quality(wedge(a)).score for a in np.array([0, 10, 25, 45]) * DEG]
    for series in (translated, rotated, sloped):
        assert all(a > b for a, b in zip(series, series[1:])), series
    worst_normal = min(translated + rotated + sloped)
    assert grasp_quality(rectangle(cy=30 * MM)).score < worst_normal  # miss
    assert grasp_quality(rectangle(half_x=30 * MM)).score < worst_normal  # collision


def test_combined_score_over_random_grasps(cube):
    """Eq. 17 and the normalisations hold for every grasp, and k changes only the weighting."""
    sil = render_silhouette(cube, top_down())
    rng = np.random.default_rng(3)
    for _ in range(200):
        centre = rng.uniform(-25 * MM, 25 * MM, 2)
        theta = rng.uniform(-math.pi, math.pi)
        q = grasp_quality(sil, centre=centre, theta=theta)
        assert_combined_score(q)
        s = q.feature_scores
        assert s["D_m"] == 1 - q.miss and s["D_c"] == 1 - q.collision
        if not math.isnan(q.d_t):
            assert s["D_t"] == pytest.approx(max(0.0, 1 - q.d_t), abs=1e-12)
            assert s["R_r"] == pytest.approx(max(0.0, 1 - q.r_r / ANGLE_THRESHOLD), abs=1e-12)
            assert 0 <= q.s_f <= W / 2 and 0 <= q.r_r <= math.pi / 2 and 0 <= q.s_a <= math.pi / 2
        q_half = grasp_quality(sil, centre=centre, theta=theta, k=0.5)
        assert q_half.feature_scores == s
        assert_combined_score(q_half, k=0.5)


def test_single_grasp_line_and_arguments():
    q = grasp_quality(rectangle(cx=3 * MM), n_lines=1)
    assert q.offsets.tolist() == [0.0]
    assert q.d_t == pytest.approx(6 * MM / R, abs=1e-12)
    assert q.r_r == 0.0 and q.s_f == 0.0
    q_coarse = grasp_quality(rectangle(), n_lines=9, contact_tol=0.1 * MM)
    assert q_coarse.grpv.shape == (2, 9)
    with pytest.raises(ValueError):
        grasp_quality(rectangle(), n_lines=0)
    with pytest.raises(ValueError):
        grasp_quality(rectangle(), w=-1.0)
    with pytest.raises(ValueError):
        Silhouette(np.zeros((0, 3), bool), RES)
    with pytest.raises(ValueError):
        Silhouette(np.zeros((3, 3), bool), 0.0)


# --- rendering ---------------------------------------------------------------------------------


def test_cube_silhouette_from_above(cube):
    """The 3 cm cube seen from above covers 900 mm^2, centred under the gripper."""
    sil = render_silhouette(cube, top_down())
    row_area = 30 * MM * RES
    assert sil.area == pytest.approx(900 * MM**2, abs=row_area)
    rows, cols = np.nonzero(sil.mask)
    centroid = sil.to_metric(np.stack([cols.mean() + 0.5, rows.mean() + 0.5]))
    np.testing.assert_allclose(centroid, 0.0, atol=RES / 2)
    q = image_quality(cube, top_down())
    np.testing.assert_allclose(q.grpv, [[-15 * MM] * 64, [15 * MM] * 64], atol=1e-12)
    assert q.score == pytest.approx(1.0, abs=1e-9)


def test_silhouette_frame_follows_grasp_and_object_pose(cube):
    """Object pose and grasp pose in the world: the cube appears where it is in the gripper frame
    (the top-down gripper's y axis is world -y)."""
    object_pose = np.eye(4)
    c, s = math.cos(0.4), math.sin(0.4)
    object_pose[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    object_pose[:3, 3] = (0.30, -0.10, 0.015)
    grasp = top_down(0.30 - 3 * MM, -0.10 + 2 * MM, 0.2)
    sil = render_silhouette(cube, grasp, object_pose=object_pose)
    rows, cols = np.nonzero(sil.mask)
    centroid = sil.to_metric(np.stack([cols.mean() + 0.5, rows.mean() + 0.5]))
    np.testing.assert_allclose(centroid, [3 * MM, 2 * MM], atol=RES / 2)
    perimeter_px = 4 * 30 * MM / RES
    assert sil.area == pytest.approx(900 * MM**2, abs=0.05 * perimeter_px * RES**2)
    # Rendering is the same as moving the mesh into the grasp's frame by hand.
    moved = cube.copy()
    moved.apply_transform(np.linalg.inv(grasp) @ object_pose)
    same = render_silhouette(moved, np.eye(4))
    assert same.origin == sil.origin
    np.testing.assert_array_equal(same.mask, sil.mask)


def test_rasterisation_matches_point_in_polygon():
    """A pixel is set iff its centre lies in a projected triangle (shapely as the oracle)."""
    rng = np.random.default_rng(7)
    vertices = np.column_stack([rng.uniform(-20 * MM, 20 * MM, (30, 2)), rng.uniform(-5 * MM, 5 * MM, 30)])
    faces = rng.integers(0, 30, (10, 3))
    faces = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])]
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    sil = render_silhouette(mesh, np.eye(4), resolution=0.5 * MM, margin=2 * MM)
    n_rows, n_cols = sil.mask.shape
    u, v = np.meshgrid(np.arange(n_cols) + 0.5, np.arange(n_rows) + 0.5)
    centres = sil.to_metric(np.stack([u, v], axis=-1))
    union = shapely.union_all([Polygon(vertices[f, :2]) for f in faces])
    expected = shapely.contains_xy(union, centres[..., 0], centres[..., 1])
    np.testing.assert_array_equal(sil.mask, expected)
    assert sil.origin[0] / (0.5 * MM) == pytest.approx(round(sil.origin[0] / (0.5 * MM)), abs=1e-9)


# --- the study's baseline interface --------------------------------------------------------------


def test_predict_scores_the_trials_perturbed_grasp(cube):
    from ipcgrasp import GraspObject, SimParams
    from ipcgrasp.baselines import MODELS
    from ipcgrasp.baselines.image_quality import SUCCESS_THRESHOLD, predict

    assert MODELS["image_quality"] is predict
    obj = GraspObject.from_mesh(cube, 0.05, "cube")
    exact = SimParams(noise_translation=0.0, noise_rotation=0.0)
    centred = predict(obj, np.eye(4), top_down(), exact, seed=3)
    assert centred.success and centred.score == pytest.approx(1.0, abs=1e-9)
    off = predict(obj, np.eye(4), top_down(x=6 * MM), exact, seed=3)
    assert off.score < centred.score
    assert abs(off.info["translation"]) == pytest.approx(6 * MM, abs=RES)
    beside = predict(obj, np.eye(4), top_down(y=40 * MM), exact, seed=3)
    assert beside.info["miss"] and not beside.success and beside.score < SUCCESS_THRESHOLD
    noisy = SimParams(noise_translation=3e-3, noise_rotation=0.0)
    assert predict(obj, np.eye(4), top_down(), noisy, 1).score != predict(obj, np.eye(4), top_down(), noisy, 2).score
