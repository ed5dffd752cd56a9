"""Write the data inventory (snakemake script: reads only the `snakemake` object)."""

from ipcgrasp.data.location import describe_data_dir
from ipcgrasp.data.registry import load_registry
from ipcgrasp.io import write_json_atomic

with open(snakemake.log[0], "w") as log:  # noqa: F821
    manifest = describe_data_dir(snakemake.params.data_dir, load_registry(snakemake.input.registry))  # noqa: F821
    write_json_atomic(snakemake.output[0], manifest)  # noqa: F821
    print(f"{len(manifest['objects'])} objects in {manifest['data_dir']}", file=log)
