"""6DFC: element normal forces, the 6-D limit surface as per-element Coulomb friction against an
element-by-element reference, the solver against the polytope LP, and known answers (box through
its centre of mass, frictionless, a non-planar cylinder contact, a wedge, a miss)."""

import numpy as np
import pytest
import trimesh

from ipcgrasp.baselines.contacts import grasp_contacts, perturbed_grasp
from ipcgrasp.baselines.reach import limit_surface
from ipcgrasp.baselines.sixdfc import contact_sets, element_normal_forces, predict
from ipcgrasp.baselines.wrench import gravity_wrench, resist
from ipcgrasp.grasp.gripper import Gripper
from ipcgrasp.grasp.object import GraspObject
from ipcgrasp.grasp.params import SimParams

from .test_contacts import box_object, no_noise, top_down_grasp
from .test_soft_point import F, G, assert_matches_reference, wedge


def test_element_normal_forces_are_linear_in_depth_and_sum_to_the_closing_force():
    rng = np.random.default_rng(0)
    depths, cells = rng.uniform(0.0, 5e-3, 50), rng.uniform(1e-7, 3e-7, 50)
    normals = rng.normal(size=(50, 3)) + [0.0, 0.0, -3.0]
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    direction = np.array([0.0, 0.0, 1.0])
    forces = element_normal_forces(depths, cells, normals, direction, F)
    assert forces @ np.abs(normals @ direction) == pytest.approx(F)
    assert np.allclose(forces / (depths * cells), forces[0] / (depths[0] * cells[0]))
    uniform = element_normal_forces(np.zeros(50), cells, normals, direction, F)
    assert np.allclose(uniform / cells, uniform[0] / cells[0])
    with pytest.raises(ValueError, match="non-negative"):
        element_normal_forces(-depths, cells, normals, direction, F)


def test_limit_surface_points_are_the_per_element_coulomb_forces_of_a_sliding_twist():
    obj = box_object([0.04, 0.03, 0.03], 0.1)
    params = SimParams(mu=0.4, noise_translation=1e-3, noise_rotation=0.01)
    contacts = grasp_contacts(obj, np.eye(4), perturbed_grasp(top_down_grasp([0.0, 0.0, 0.0]), params, 3))
    jaw = contacts.jaws[0]
    wrench_set = contact_sets(contacts, params)[0]
    normal_forces = element_normal_forces(jaw.patch_depths, jaw.patch_projected_areas, jaw.patch_normals,
                                          jaw.closing_direction, F)
    arms = jaw.patch_points - contacts.center_of_mass
    for twist in np.random.default_rng(1).normal(size=(5, 6)) * [1, 1, 1, 50, 50, 50]:
        # the object slides with velocity v + omega x r at each element; friction opposes the
        # tangential part: f_k = -mu N_k u_k / |u_k|. Its wrench maximises y . w for y = -twist.
        expected = np.zeros(6)
        for n, arm, force in zip(jaw.patch_normals, arms, normal_forces):
            velocity = twist[:3] + np.cross(twist[3:], arm)
            tangential = velocity - (velocity @ n) * n
            friction = -params.mu * force * tangential / np.linalg.norm(tangential)
            expected += np.concatenate([friction, np.cross(arm, friction)])
        value, point = wrench_set.friction_support(-twist)
        assert point == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert value == pytest.approx(-twist @ expected, rel=1e-12)


def test_flat_patch_has_the_uniform_pressure_force_and_torsion_limits(full_pad_contacts):
    params = no_noise(mu=0.3)
    contacts = full_pad_contacts()
    jaw = contacts.jaws[0]
    wrench_set = contact_sets(contacts, params)[0]
    z = jaw.closing_direction
    centre, tangential, torsional = limit_surface(jaw.patch_points, jaw.patch_projected_areas, z, F, params.mu)
    # pure sliding: mu F; pure spin about the centre of pressure: REACH's tau_max
    assert wrench_set.friction_support(np.concatenate([[0.0, 0.0, 1.0], np.zeros(3)]))[0] == pytest.approx(tangential)
    spin = np.concatenate([np.cross(centre - contacts.center_of_mass, z), z])  # moment about the centre
    assert wrench_set.friction_support(spin)[0] == pytest.approx(torsional, rel=1e-9)


@pytest.mark.parametrize("mu", [0.3, 0.8])
def test_box_grasped_through_its_centre_of_mass_holds_with_the_friction_force(centred_box, mu):
    prediction = predict(*centred_box, no_noise(mu=mu), 0)
    assert prediction.success
    assert prediction.score == pytest.approx(2 * mu * F / (centred_box[0].mass * G), rel=1e-4)


def test_frictionless_box_falls(centred_box):
    prediction = predict(*centred_box, no_noise(mu=0.0), 0)
    assert not prediction.success and prediction.score == 0.0


def test_non_planar_cylinder_contact_carries_the_friction_force():
    # a horizontal cylinder squeezed across its axis: the patch is a curved band whose normals
    # tilt up and down; the tilted normal forces cancel in pairs and the vertical friction
    # capacity is sum_k mu N_k cos(beta_k) = mu F per pad, so s m g = 2 mu F again
    mass, mu = 0.2, 0.4
    mesh = trimesh.creation.cylinder(radius=0.015, height=0.06, sections=128)
    mesh.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0.0, 1.0, 0.0]))
    obj = GraspObject.from_mesh(mesh, mass, "cylinder")
    # the rectangular pad's footprint is symmetric about tooltip x = -3 mm: put the axis there
    params = no_noise(mu=mu, jaw="rectangular")
    grasp = top_down_grasp([0.0, 0.0, -0.003])
    contacts = grasp_contacts(obj, np.eye(4), grasp, Gripper.yumi("rectangular"))
    tilts = np.abs(contacts.jaws[0].patch_normals[:, 2])
    assert tilts.max() > 0.5  # the band wraps well round the cylinder
    prediction = predict(obj, np.eye(4), grasp, params, 0)
    assert prediction.success
    assert prediction.score == pytest.approx(2 * mu * F / (mass * G), rel=1e-3)


@pytest.mark.parametrize("ratio", [0.85, 1.15])
def test_squeezed_wedge_holds_iff_its_sides_are_inside_the_friction_cone(ratio):
    mu = 0.5
    prediction = predict(wedge(ratio * mu), np.eye(4), top_down_grasp([0.0, 0.0, 0.0]), no_noise(mu=mu), 0)
    assert prediction.success == (ratio < 1.0)


@pytest.mark.parametrize("offset", [0.0, 0.03])
def test_resist_matches_the_polytope_lp(offset):
    # a perturbed bar grasp on a coarse grid (2 mm cells) keeps the reference LP small
    bar = box_object([0.2, 0.02, 0.04], 0.3)
    params = SimParams(mu=0.3, noise_translation=1e-3, noise_rotation=0.005)
    contacts = grasp_contacts(bar, np.eye(4), perturbed_grasp(top_down_grasp([offset, 0.0, 0.0]), params, 5),
                              spacing=2e-3)
    sets = contact_sets(contacts, params)
    load = gravity_wrench(contacts.mass, contacts.center_of_mass)
    assert_matches_reference(resist(sets, load, tolerance=1e-5), sets, load)


def test_object_outside_the_jaws_is_a_miss():
    prediction = predict(box_object([0.03, 0.03, 0.03]), np.eye(4), top_down_grasp([0.0, 0.06, 0.0]), no_noise(), 0)
    assert not prediction.success and prediction.info["reason"] == "miss"
