# lit for the out-of-tree consumer: its consumer-opt and consumer-capi, built
# against the installed nvwgmma package, from --param consumer_bin=<dir>.
import os

import lit.formats

config.name = "nvwgmma-consumer"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params["consumer_bin"]
for tool in ("consumer-opt", "consumer-capi"):
    config.substitutions.append((tool, os.path.join(lit_config.params["consumer_bin"], tool)))
config.substitutions.append(("FileCheck", lit_config.params["filecheck"]))
