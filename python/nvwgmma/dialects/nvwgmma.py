"""The nvwgmma dialect: generated op and enum classes plus friendly builders."""

# isort: skip_file
# Order matters: the builders (mma_async, wait_group, ...) must shadow the
# generated op functions of the same names.
from ._nvwgmma_ops_gen import *  # noqa: F403
from ._nvwgmma_enum_gen import *  # noqa: F403
from ._nvwgmma_builders import *  # noqa: F403
