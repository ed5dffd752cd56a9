"""REACH area contact model: the patch's limit surface against quadrature, the solver against the
polytope LP, and known answers (box through its centre of mass, frictionless, the ellipsoidal
force-torque limit of a bar grasped off its centre of mass, a miss)."""

import numpy as np
import pytest
import shapely

from ipcgrasp.baselines.contacts import grasp_contacts, perturbed_grasp
from ipcgrasp.baselines.reach import contact_sets, limit_surface, predict
from ipcgrasp.baselines.wrench import gravity_wrench, resist
from ipcgrasp.geometry.pads import pad_outline
from ipcgrasp.grasp.params import SimParams

from .test_contacts import box_object, no_noise, top_down_grasp
from .test_soft_point import F, G, assert_matches_reference, wedge


def test_limit_surface_of_a_ring_and_its_centre():
    angles = np.linspace(0.0, 2.0 * np.pi, 64, endpoint=False)
    centre = np.array([0.1, -0.2, 0.3])
    z = np.array([0.0, 0.6, 0.8])
    u = np.array([1.0, 0.0, 0.0])
    v = np.cross(z, u)
    heights = np.random.default_rng(0).uniform(-1e-3, 1e-3, 64)  # offsets along z do not count
    points = centre + 0.01 * (np.outer(np.cos(angles), u) + np.outer(np.sin(angles), v)) + np.outer(heights, z)
    c, tangential, torsional = limit_surface(points, np.full(64, 2e-6), z, F, 0.4)
    assert c == pytest.approx(centre + heights.mean() * z, abs=1e-15)
    assert tangential == pytest.approx(0.4 * F)
    assert torsional == pytest.approx(0.4 * F * 0.01, rel=1e-12)
    with pytest.raises(ValueError, match="patch"):
        limit_surface(np.empty((0, 3)), np.empty(0), z, F, 0.4)


@pytest.mark.parametrize("jaw", ["rounded", "rectangular"])
def test_torsional_limit_of_a_full_pad_is_the_footprints_mean_distance_integral(full_pad_contacts, jaw):
    params = no_noise(mu=0.3, jaw=jaw)
    jaw_contact = full_pad_contacts(jaw).jaws[0]
    _, _, torsional = limit_surface(jaw_contact.patch_points, jaw_contact.patch_projected_areas,
                                    jaw_contact.closing_direction, F, params.mu)
    # independent quadrature: a 0.04 mm grid over the outline, distances from its centroid
    polygon = pad_outline(jaw)
    h = 4e-5
    x, y = np.meshgrid(np.arange(polygon.bounds[0] + h / 2, polygon.bounds[2], h),
                       np.arange(polygon.bounds[1] + h / 2, polygon.bounds[3], h))
    inside = shapely.contains_xy(polygon, x, y)
    centroid = np.asarray(polygon.centroid.coords)[0]
    mean_distance = np.hypot(x[inside] - centroid[0], y[inside] - centroid[1]).mean()
    assert torsional == pytest.approx(params.mu * F * mean_distance, rel=1e-3)


@pytest.mark.parametrize("mu", [0.3, 0.8])
def test_box_grasped_through_its_centre_of_mass_holds_with_the_friction_force(centred_box, mu):
    prediction = predict(*centred_box, no_noise(mu=mu), 0)
    assert prediction.success
    assert prediction.score == pytest.approx(2 * mu * F / (centred_box[0].mass * G), rel=1e-4)


def test_frictionless_box_falls(centred_box):
    prediction = predict(*centred_box, no_noise(mu=0.0), 0)
    assert not prediction.success and prediction.score == 0.0


@pytest.mark.parametrize("ratio", [0.97, 1.03])
def test_bar_off_its_centre_of_mass_holds_inside_the_elliptic_limit(ratio):
    # per pad: tangential force m g / 2 and torsion m g d / 2 with
    # (m g / (2 mu F))^2 + (m g d / (2 tau_max))^2 <= 1 (the ellipsoidal limit surface)
    mass, mu = 0.3, 0.3
    bar = box_object([0.2, 0.02, 0.04], mass)
    params = no_noise(mu=mu)
    centred = grasp_contacts(bar, np.eye(4), top_down_grasp([0.0, 0.0, 0.0]))
    jaw = centred.jaws[0]
    tau_max = limit_surface(jaw.patch_points, jaw.patch_projected_areas, jaw.closing_direction, F, mu)[2]
    weight = mass * G
    limit = 2 * tau_max / weight * np.sqrt(1.0 - (weight / (2 * mu * F)) ** 2)
    offset = ratio * limit
    prediction = predict(bar, np.eye(4), top_down_grasp([offset, 0.0, 0.0]), params, 0)
    expected = 1.0 / np.hypot(weight / (2 * mu * F), weight * offset / (2 * tau_max))
    assert prediction.success == (ratio < 1.0)
    assert prediction.score == pytest.approx(expected, rel=1e-3)


@pytest.fixture
def cube():
    """The 3 cm cube grasped across two faces, turned 0.3 rad about the vertical."""
    pose = np.eye(4)
    pose[:2, :2] = [[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]]
    return box_object([0.03, 0.03, 0.03], 0.003), pose, top_down_grasp([0.0, 0.002, 0.004])


def test_resist_matches_the_polytope_lp_on_perturbed_cube_grasps(cube):
    obj, object_pose, grasp_pose = cube
    params = SimParams(mu=0.3, noise_translation=2e-3, noise_rotation=0.03)
    for seed in range(3):
        contacts = grasp_contacts(obj, object_pose, perturbed_grasp(grasp_pose, params, seed))
        assert contacts.hit
        sets = contact_sets(contacts, params)
        load = gravity_wrench(contacts.mass, contacts.center_of_mass)
        assert_matches_reference(resist(sets, load, tolerance=1e-5), sets, load)


def test_planar_contact_ignores_a_wedges_tilt():
    # REACH's pressure acts along the closing direction, so a wedge steeper than the friction
    # angle (which soft point and 6DFC reject) still holds
    prediction = predict(wedge(1.15 * 0.5), np.eye(4), top_down_grasp([0.0, 0.0, 0.0]), no_noise(mu=0.5), 0)
    assert prediction.success


def test_object_outside_the_jaws_is_a_miss():
    prediction = predict(box_object([0.03, 0.03, 0.03]), np.eye(4), top_down_grasp([0.0, 0.0, 0.05]), no_noise(), 0)
    assert not prediction.success and prediction.info["reason"] == "miss"
