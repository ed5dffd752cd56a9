"""SimParams: defaults, validation messages that name the field, dict round trip."""

import dataclasses
import json
import math

import pytest

from ipcgrasp import SimParams
from ipcgrasp.grasp.params import CLOSE_RULES, JAWS

POSITIVE = ("E", "density", "pad_resolution", "close_force", "psi_th", "close_duration", "lift_speed",
            "lift_height", "contact_tol", "dt", "eps_v", "newton_tolerance")
NON_NEGATIVE = ("mu", "mu_ground", "noise_translation", "noise_rotation", "hold_time", "psi_tol")


def test_every_field_has_a_default_matching_the_data_sheet():
    p = SimParams()
    assert (p.E, p.mu, p.close_force, p.dt) == (1e8, 0.4, 20.0, 0.02)
    assert (p.noise_translation, p.noise_rotation, p.contact_tol) == (1e-3, 3e-3, 5e-4)
    assert (p.lift_speed, p.max_grip_force, p.lift_height) == (None, None, 0.02)  # None: the gripper's
    assert p.close_rule in CLOSE_RULES and p.jaw in JAWS
    assert set(SimParams.field_names()) == {f.name for f in dataclasses.fields(SimParams)}


def test_to_dict_round_trips_through_json():
    p = SimParams(E=3e7, mu=0.25, close_rule="psi", psi_th=1.2e-5, jaw="rectangular", dhat=2e-4)
    d = p.to_dict()
    assert tuple(d) == SimParams.field_names()
    assert SimParams(**json.loads(json.dumps(d))) == p


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SimParams().mu = 0.1


@pytest.mark.parametrize("name", POSITIVE)
@pytest.mark.parametrize("value", [0.0, -1e-9, math.nan])
def test_positive_fields_reject_non_positive_values(name, value):
    with pytest.raises(ValueError, match=rf"SimParams\.{name}\b"):
        SimParams(**{name: value})


@pytest.mark.parametrize("name", NON_NEGATIVE)
@pytest.mark.parametrize("value", [-1e-9, math.nan])
def test_non_negative_fields_reject_negative_values(name, value):
    with pytest.raises(ValueError, match=rf"SimParams\.{name}\b"):
        SimParams(**{name: value})


@pytest.mark.parametrize("name", NON_NEGATIVE)
def test_non_negative_fields_accept_zero(name):
    assert getattr(SimParams(**{name: 0.0}), name) == 0.0


@pytest.mark.parametrize("nu", [-0.1, 0.5, 0.7, math.nan])
def test_poisson_ratio_outside_range_rejected(nu):
    with pytest.raises(ValueError, match=r"SimParams\.nu\b"):
        SimParams(nu=nu)


def test_poisson_ratio_bounds():
    assert SimParams(nu=0.0).nu == 0.0
    assert SimParams(nu=0.499).nu == 0.499


@pytest.mark.parametrize("field, value", [("close_rule", "Force"), ("close_rule", "energy"),
                                          ("jaw", "Square"), ("jaw", "")])
def test_unknown_choices_rejected_with_the_choices(field, value):
    with pytest.raises(ValueError, match=rf"SimParams\.{field}\b") as info:
        SimParams(**{field: value})
    choices = CLOSE_RULES if field == "close_rule" else JAWS
    assert all(c in str(info.value) for c in choices)


@pytest.mark.parametrize("field, value", [("closing_speed", 0.0), ("closing_speed", -0.01),
                                          ("dhat", 0.0), ("dhat", -1e-4)])
def test_optional_lengths_and_speeds_must_be_positive(field, value):
    with pytest.raises(ValueError, match=rf"SimParams\.{field}\b"):
        SimParams(**{field: value})


@pytest.mark.parametrize("field", ["E", "dt", "lift_height", "hold_time", "mu"])
def test_infinite_values_rejected(field):
    with pytest.raises(ValueError, match=rf"SimParams\.{field}\b"):
        SimParams(**{field: math.inf})
