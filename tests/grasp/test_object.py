"""GraspObject: the mass is a real number of kilograms with a plausible density for the mesh."""

import pytest
import trimesh

from ipcgrasp import GraspObject
from ipcgrasp.grasp.object import DENSITY_RANGE


def box():
    return trimesh.creation.box(extents=(0.03, 0.03, 0.03))  # 27 cm^3


@pytest.mark.parametrize("mass", [0.003, 0.05, 0.6])
def test_plausible_masses_are_accepted(mass):
    assert GraspObject.from_mesh(box(), mass, "box").mass == mass


@pytest.mark.parametrize("mass, why", [(50.0, "grams for kilograms"), (1e-4, "too light")])
def test_an_implausible_density_is_refused_stating_the_range(mass, why):
    with pytest.raises(ValueError, match=r"box: mass .* kg/m\^3, outside the plausible 10-25000 kg/m\^3; fix") as e:
        GraspObject.from_mesh(box(), mass, "box")
    assert not DENSITY_RANGE[0] <= mass / 27e-6 <= DENSITY_RANGE[1], why
    assert "(not g)" in str(e.value)


@pytest.mark.parametrize("mass", [True, "0.05", None])
def test_a_mass_that_is_not_a_number_is_refused_naming_the_object(mass):
    with pytest.raises(ValueError, match="box: mass must be a positive finite number of kilograms"):
        GraspObject.from_mesh(box(), mass, "box")
