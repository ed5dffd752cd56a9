"""Soft point contact model and the shared wrench-resistance solver: the column-generation solver
against a polytope LP built from scratch (inner and outer discretisations of every friction
ball), and known answers (a box grasped through its centre of mass, frictionless contacts, the
torque limit of a bar grasped off its centre of mass, a wedge steeper than the friction angle,
a miss)."""

import math

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse
import scipy.spatial
import trimesh

from ipcgrasp.baselines import MODELS
from ipcgrasp.baselines.contacts import grasp_contacts, perturbed_grasp
from ipcgrasp.baselines.soft_point import CONTACT_RADIUS, contact_sets, predict, torsional_friction_limit
from ipcgrasp.baselines.wrench import (
    ContactWrenchSet,
    disc_blocks,
    gravity_wrench,
    resist,
    resist_gravity,
    tangent_bases,
    torsion_blocks,
    wrenches,
)
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import SimParams

from .test_contacts import box_object, no_noise, top_down_grasp

G = 9.81
F = 20.0


def ball_polytope(k: int, outer: bool) -> np.ndarray:
    """Vertices (V, k) of a polytope inside (outer=False) or containing (outer=True) the unit ball
    of R^k: the segment for k = 1, a 96-gon for k = 2, an icosphere (642 vertices) for k = 3;
    the outer one is the inner one divided by its inradius."""
    if k == 1:
        return np.array([[1.0], [-1.0]])
    if k == 2:
        angles = np.linspace(0.0, 2.0 * np.pi, 96, endpoint=False)
        vertices = np.column_stack([np.cos(angles), np.sin(angles)])
    else:
        vertices = trimesh.creation.icosphere(3).vertices
    if outer:
        hull = scipy.spatial.ConvexHull(vertices)
        vertices = vertices / np.min(-hull.equations[:, -1])
    return vertices


def reference_factor(sets, load, outer: bool) -> float:
    """Largest s with sum_i sigma_i n_i + sum_e M_e u_e + s load = 0, u_e in sigma_i P_e (P_e a
    polytope inside or around the unit ball), sigma >= 0, sum sigma = number of sets: one LP
    (HiGHS) over every polytope vertex. nan when infeasible."""
    n = len(sets)
    columns, ub_rows = [], []  # wrench columns; (block row, set, count) for sum lambda <= sigma
    block = 0
    for i, s in enumerate(sets):
        for matrices in s.blocks:
            vertices = ball_polytope(matrices.shape[2], outer)
            for m in matrices:
                columns.append(m @ vertices.T)
                ub_rows.append((block, i, vertices.shape[0]))
                block += 1
    lam = np.hstack(columns) if columns else np.zeros((6, 0))
    n_lam = lam.shape[1]
    # variables: sigma (n), lambda (n_lam), s
    a_eq = np.zeros((7, n + n_lam + 1))
    a_eq[:6, :n] = np.array([s.normal_wrench for s in sets]).T
    a_eq[:6, n:n + n_lam] = lam
    a_eq[:6, -1] = load
    a_eq[6, :n] = 1.0
    b_eq = np.zeros(7)
    b_eq[6] = n
    a_ub = scipy.sparse.lil_matrix((block, n + n_lam + 1))
    start = 0
    for row, i, count in ub_rows:
        a_ub[row, n + start:n + start + count] = 1.0
        a_ub[row, i] = -1.0
        start += count
    cost = np.zeros(n + n_lam + 1)
    cost[-1] = -1.0
    bounds = [(0.0, None)] * (n + n_lam) + [(-1e9, 1e9)]
    result = scipy.optimize.linprog(cost, A_ub=a_ub.tocsr() if block else None, b_ub=np.zeros(block) if block else None,
                                    A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    return result.x[-1] if result.status == 0 else math.nan


def assert_matches_reference(result, sets, load, rel=2e-4):
    inner, outer = reference_factor(sets, load, False), reference_factor(sets, load, True)
    if math.isnan(outer):
        assert not result.balanced
        return
    assert result.balanced and not math.isnan(inner)
    slack = rel * max(1.0, abs(result.factor))
    assert inner - slack <= result.factor <= outer + slack
    assert result.gap <= slack


def random_jaw_sets(rng, mu, torsion=True, tilt=0.2, scatter=3e-3):
    """Two soft point contacts across a random grasp about the origin: normals within `tilt` of
    +-x, points within `scatter` of x = -+12 mm."""
    sets = []
    for sign in (1.0, -1.0):
        normal = np.array([sign, 0.0, 0.0]) + rng.uniform(-tilt, tilt, 3)
        normal /= np.linalg.norm(normal)
        point = np.array([-sign * 0.012, 0.0, 0.0]) + rng.uniform(-scatter, scatter, 3)
        blocks = [disc_blocks(point, normal, mu * F, np.zeros(3))]
        if torsion:
            blocks.append(torsion_blocks(normal, torsional_friction_limit(mu, F)))
        sets.append(ContactWrenchSet(wrenches(point, F * normal, np.zeros(3))[0], tuple(blocks)))
    return sets


def test_wrench_helpers():
    rng = np.random.default_rng(1)
    points, forces, reference = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=3)
    w = wrenches(points, forces, reference)
    assert np.allclose(w[:, :3], forces)
    assert np.allclose(w[:, 3:], [np.cross(p - reference, f) for p, f in zip(points, forces)])
    assert np.allclose(gravity_wrench(2.0, [0.0, 0.0, 1.0]), [0, 0, -2 * G, 0, 0, 0])
    assert np.allclose(gravity_wrench(2.0, [1.0, 0.0, 0.0], reference=np.zeros(3))[3:], [0.0, 2 * G, 0.0])
    normals = rng.normal(size=(50, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    normals[:3] = np.eye(3)
    bases = tangent_bases(normals)
    for n, t in zip(normals, bases):
        frame = np.column_stack([t, n])
        assert np.allclose(frame.T @ frame, np.eye(3)) and np.linalg.det(frame) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="mass"):
        gravity_wrench(0.0, np.zeros(3))


def test_support_function_is_attained_and_maximal():
    rng = np.random.default_rng(2)
    (wrench_set, _) = random_jaw_sets(rng, 0.4)
    for direction in rng.normal(size=(20, 6)):
        value, point = wrench_set.support(direction)
        assert direction @ point == pytest.approx(value, rel=1e-12)
        # random points of the set: normal part plus each block applied to a random unit-ball point
        for _ in range(20):
            sample = wrench_set.normal_wrench.copy()
            for block in wrench_set.blocks:
                for m in block:
                    u = rng.normal(size=m.shape[1])
                    sample += m @ (u / max(1.0, np.linalg.norm(u)) * rng.random())
            assert direction @ sample <= value + 1e-12


def test_resist_matches_the_polytope_lp_on_random_grasps():
    rng = np.random.default_rng(3)
    unbalanced = 0
    for trial in range(12):
        mu = rng.uniform(0.05, 0.8)
        sets = random_jaw_sets(rng, mu, torsion=trial % 3 != 0, tilt=0.3)
        load = gravity_wrench(rng.uniform(0.05, 2.0), rng.uniform(-0.01, 0.01, 3), reference=np.zeros(3),
                              gravity=G * rng.normal(size=3))
        result = resist(sets, load, tolerance=1e-5)
        assert_matches_reference(result, sets, load)
        unbalanced += not result.balanced
    assert 0 < unbalanced < 12  # both outcomes are exercised


def test_resist_certifies_its_gap_and_honours_the_margin():
    sets = random_jaw_sets(np.random.default_rng(4), 0.5, tilt=0.0, scatter=0.0)
    load = gravity_wrench(0.5, np.zeros(3))
    result = resist(sets, load, tolerance=1e-6)
    assert result.balanced and 0.0 <= result.gap <= 1e-6 * result.factor
    assert result.factor == pytest.approx(2 * 0.5 * F / (0.5 * G), rel=1e-5)
    assert resist(sets, load, margin=result.factor - 1.0 - 1e-3).resisted
    assert not resist(sets, load, margin=result.factor - 1.0 + 1e-3).resisted
    with pytest.raises(ValueError, match="load"):
        resist(sets, np.zeros(6))


def test_torsional_limit_is_the_uniform_disc_integral():
    # tau_max = integral over the disc of mu p r dA with p = F / (pi a^2)
    r = np.linspace(0.0, CONTACT_RADIUS, 20001)
    integrand = 0.3 * F / (np.pi * CONTACT_RADIUS**2) * r * 2 * np.pi * r
    integral = np.sum(0.5 * (integrand[1:] + integrand[:-1]) * np.diff(r))
    assert torsional_friction_limit(0.3, F) == pytest.approx(integral, rel=1e-7)


@pytest.mark.parametrize("mu", [0.3, 0.8])
def test_box_grasped_through_its_centre_of_mass_holds_with_the_friction_force(mu):
    mass = 0.2
    obj = box_object([0.04, 0.03, 0.03], mass)
    prediction = predict(obj, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]), no_noise(mu=mu), 0)
    assert prediction.success and prediction.info["reason"] == "held"
    # the two friction discs carry the weight: s m g = 2 mu F
    assert prediction.score == pytest.approx(2 * mu * F / (mass * G), rel=1e-4)
    assert prediction.runtime > 0.0


def test_frictionless_box_falls():
    obj = box_object([0.04, 0.03, 0.03], 0.2)
    for mu in (0.0, 1e-4):
        prediction = predict(obj, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]), no_noise(mu=mu), 0)
        assert not prediction.success and prediction.score < 0.01


def bar_limit(mass, mu):
    """Offset d* of the grasp from the bar's centre of mass at which the two torsional friction
    limits just carry the gravity torque: 2 tau_max = m g d*."""
    return 2 * torsional_friction_limit(mu, F) / (mass * G)


@pytest.mark.parametrize("ratio", [0.97, 1.03, 2.0])
def test_bar_grasped_off_its_centre_of_mass_holds_up_to_the_torsional_limit(ratio):
    mass, mu = 0.3, 0.5
    bar = box_object([0.2, 0.02, 0.04], mass)
    offset = ratio * bar_limit(mass, mu)
    prediction = predict(bar, np.eye(4), top_down_grasp([offset, 0.0, 0.0]), no_noise(mu=mu), 0)
    assert prediction.success == (ratio < 1.0)
    # torque-limited (the weight alone needs only m g / 2 <= mu F per pad): s = d* / d
    assert prediction.score == pytest.approx(1.0 / ratio, rel=1e-3)


def wedge(tan_alpha, mass=1e-3):
    """A prism 40 mm long (x) and 40 mm high (z), its sides y = +-(12 mm - z tan alpha) leaning in
    by alpha towards the top, centred at the origin."""
    corners = [(x, s * (0.012 - z * tan_alpha), z) for x in (-0.02, 0.02) for s in (-1, 1) for z in (-0.02, 0.02)]
    return GraspObject.from_mesh(trimesh.convex.convex_hull(corners), mass, "wedge")


@pytest.mark.parametrize("ratio", [0.85, 1.15])
def test_squeezed_wedge_holds_iff_its_sides_are_inside_the_friction_cone(ratio):
    mu = 0.5
    prediction = predict(wedge(ratio * mu), np.eye(4), top_down_grasp([0.0, 0.0, 0.0]), no_noise(mu=mu), 0)
    assert prediction.success == (ratio < 1.0)


def test_object_outside_the_jaws_is_a_miss():
    prediction = predict(box_object([0.03, 0.03, 0.03]), np.eye(4), top_down_grasp([0.06, 0.0, 0.0]), no_noise(), 0)
    assert not prediction.success and prediction.score == 0.0 and prediction.info["reason"] == "miss"


def test_object_wider_than_the_jaws_open_is_not_grasped():
    prediction = predict(box_object([0.03, 0.07, 0.03]), np.eye(4), top_down_grasp([0.0, 0.0, 0.0]), no_noise(), 0)
    assert not prediction.success and prediction.info["reason"] == "no_clearance"


def test_predict_sees_the_seeded_perturbed_grasp():
    obj = box_object([0.04, 0.03, 0.03], 0.2)
    grasp, params = top_down_grasp([0.0, 0.0, 0.0]), SimParams(mu=0.4, noise_translation=2e-3, noise_rotation=0.02)
    first, again = predict(obj, np.eye(4), grasp, params, 11), predict(obj, np.eye(4), grasp, params, 11)
    assert first.score == again.score and first.info["travel"] == again.info["travel"]
    contacts = grasp_contacts(obj, np.eye(4), perturbed_grasp(grasp, params, 11), Gripper.yumi(params.jaw))
    expected = resist_gravity(contact_sets(contacts, params), contacts.mass, contacts.center_of_mass)
    assert first.score == pytest.approx(expected.factor, rel=1e-12)
    assert predict(obj, np.eye(4), grasp, params, 12).info["travel"] != first.info["travel"]


def test_registry_lists_the_analytic_models():
    assert list(MODELS)[:3] == ["soft_point", "reach", "6dfc"]
    assert MODELS["soft_point"] is predict
    with pytest.raises(KeyError, match="registered models"):
        MODELS["nope"]
