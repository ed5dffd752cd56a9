"""Grasp datasets for a user's own object: antipodal parallel-jaw candidates on a mesh
(`antipodal`), labelled by simulation into JSON + PNG records with a CSV index (`records`),
in one process or as Snakemake jobs over shards of the grasps (`shards`, split as `sharding` says;
workflow/generate.smk).

    from ipcgrasp import GraspObject, SimParams
    from ipcgrasp.dataset import generate_dataset

    obj = GraspObject.from_file("my.obj", mass=0.05)
    generate_dataset(obj, "my_grasps", n=200, params=SimParams(mu=0.4), n_trials=5, workers=2)

The names are imported on first use (PEP 562), so importing a light module of the package (what
workflow/generate.smk imports to parse: `sharding`) loads neither the simulator nor trimesh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcgrasp.lazy import lazy_names

if TYPE_CHECKING:
    from ipcgrasp.dataset.antipodal import GraspCandidate, SamplerSettings, Sampling, sample_antipodal_grasps
    from ipcgrasp.dataset.records import (
        Generation,
        RecordError,
        generate_dataset,
        index_table,
        load_schema,
        read_records,
        validate_record,
    )

_HOMES = {
    "Generation": "ipcgrasp.dataset.records",
    "GraspCandidate": "ipcgrasp.dataset.antipodal",
    "RecordError": "ipcgrasp.dataset.records",
    "SamplerSettings": "ipcgrasp.dataset.antipodal",
    "Sampling": "ipcgrasp.dataset.antipodal",
    "generate_dataset": "ipcgrasp.dataset.records",
    "index_table": "ipcgrasp.dataset.records",
    "load_schema": "ipcgrasp.dataset.records",
    "read_records": "ipcgrasp.dataset.records",
    "sample_antipodal_grasps": "ipcgrasp.dataset.antipodal",
    "validate_record": "ipcgrasp.dataset.records",
}
"""Public name -> the module that defines it."""

__all__ = [
    "Generation",
    "GraspCandidate",
    "RecordError",
    "SamplerSettings",
    "Sampling",
    "generate_dataset",
    "index_table",
    "load_schema",
    "read_records",
    "sample_antipodal_grasps",
    "validate_record",
]

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
