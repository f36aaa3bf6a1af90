"""What a simulated `dcgmi diag --run LEVEL` runs and how a failing test reports, as DCGM's own source says.

The tests each level runs are NVVS's suites (nvvs/src/NvidiaValidationSuite.cpp `FillTestVectors`: level 1
`short`, 2 `medium`, 3 `long`, 4 `xlong`, each a superset of the one before), in the order NVVS runs them
(its classes software, hardware, integration, performance), for the two releases the simulator emulates:
DCGM 3.3.9 (tag v3.3.9, 3869efb) and DCGM 4.5.2 (tag v4.5.2, 0869351; the catalog's image). Left out: what the
GPU operator's DCGM image does not hold (the EUD plugins: NVVS adds them only when their package is installed)
and `context_create`/`sm_stress` (no level runs them). Kept: what 4.x adds at level 3 and skips by itself,
`nvbandwidth` (runs) and `nccl_tests` (Skip on every GPU unless DCGM_NCCL_TESTS_BIN_PATH is set).

A failing test reports one of its plugin's own errors (dcgmlib/dcgm_errors.h and dcgm_errors.c at v4.5.2: the
code, message format, next steps, priority and category), and dcgmi exits with `DCGM_ST_NVVS_ISOLATE_ERROR` when
one error's priority is ISOLATE, else `DCGM_ST_NVVS_ERROR` (dcgmi/Diag.cpp `GetFailureResult`; dcgmi's main
returns the dcgmReturn_t, so the shell sees it modulo 256).
"""
from __future__ import annotations

from dataclasses import dataclass

LAYOUTS = (3, 4)
DEFAULT_LAYOUT = 4
LEVELS = (1, 2, 3, 4)
# dcgmi's names for the levels (NvidiaValidationSuite.cpp: `quick` is `short`).
LEVEL_NAMES = {"short": 1, "quick": 1, "medium": 2, "long": 3, "xlong": 4}
ALL_SKIP = "all-skip"

DCGM_VERSION = {3: "3.3.9", 4: "4.5.2"}
DRIVER_VERSION = {3: "550.127.05", 4: "580.95.05"}
EXIT_ISOLATE = -51 % 256   # DCGM_ST_NVVS_ISOLATE_ERROR: 205
EXIT_ERROR = -30 % 256     # DCGM_ST_NVVS_ERROR: 226

# DCGM 3.x's deployment checks (dcgmi/Diag.cpp levelOneTests at v3.3.9, less `CUDA Toolkit Library`, which
# NVVS never runs and dcgmi leaves out); 4.x reports them as one test, `software`, per GPU.
DEPLOYMENT_V3 = ("Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
                 "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom")


@dataclass(frozen=True)
class Test:
    """One DCGM test: its 4.x JSON name (the fault's `--test`), 3.x display name (for `software`: the deployment
    check its failure shows in), category in each layout, the level that first runs it, and its failure as its
    plugin reports it."""

    name: str
    display: str
    category_v4: str
    category_v3: str
    level: int
    error_id: int
    error_name: str
    message: str        # the error's message format, GPU index as {gpu}, then DCGM's next steps
    severity: int       # dcgm_errors.c priority: 2 ISOLATE, 4 TRIAGE, 6 RESET
    error_category: int  # dcgm_errors.c category (DCGM_FR_EC_*)
    layouts: tuple[int, ...] = LAYOUTS

    def failure(self, gpu: int) -> str:
        return self.message.format(gpu=gpu)


ISOLATE, TRIAGE, RESET = 2, 4, 6
EC_PERF_THRESHOLD, EC_HARDWARE_MEMORY, EC_HARDWARE_PCIE, EC_HARDWARE_POWER, EC_HARDWARE_OTHER = 1, 10, 13, 14, 15
RUN_FIELD_DIAG = " Run a field diagnostic on the GPU."
SYSTEM_TRIAGE = " Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics."

MEMORY_MISMATCH = ("A memory mismatch was detected on GPU {gpu}, but no error was reported by CUDA or NVML."
                   + RUN_FIELD_DIAG)
TARGET_POWER = ("Max power of {seen} did not reach desired power minimum target_power_min_ratio of {want} for GPU "
                "{{gpu}} Verify that the clock speeds and GPU utilization are high.")

# In the order NVVS runs them (a 4.x layout's categories follow in order of first appearance).
TESTS = (
    Test("software", "Page Retirement/Row Remap", "Deployment", "Deployment", 1, 80, "DCGM_FR_ROW_REMAP_FAILURE",
         "GPU {gpu} had uncorrectable memory errors and row remapping failed." + RUN_FIELD_DIAG,
         ISOLATE, EC_HARDWARE_MEMORY),
    Test("memory", "GPU Memory", "Hardware", "Hardware", 2, 58, "DCGM_FR_MEMORY_MISMATCH",
         MEMORY_MISMATCH, ISOLATE, EC_HARDWARE_MEMORY),
    Test("diagnostic", "Diagnostic", "Hardware", "Hardware", 3, 52, "DCGM_FR_FAULTY_MEMORY",
         "Found 4 faulty memory elements on GPU {gpu}" + RUN_FIELD_DIAG, ISOLATE, EC_HARDWARE_MEMORY),
    Test("nvbandwidth", "nvbandwidth", "Hardware", "Hardware", 3, 30, "DCGM_FR_LOW_BANDWIDTH",
         "Bandwidth of GPU {gpu} in direction host_to_device_memcpy_ce of 12.31 did not exceed minimum required "
         "bandwidth of 40.00." + SYSTEM_TRIAGE, TRIAGE, EC_HARDWARE_PCIE, layouts=(4,)),
    Test("nccl_tests", "nccl_tests", "Hardware", "Hardware", 3, 129, "DCGM_FR_NCCL_ERROR",
         "Detected NCCL error: unhandled system error on GPU {gpu} Recovery action: 2 (DRAIN_AND_RESET).",
         RESET, EC_HARDWARE_OTHER, layouts=(4,)),
    Test("memtest", "Memtest", "Stress", "Stress", 4, 58, "DCGM_FR_MEMORY_MISMATCH",
         MEMORY_MISMATCH, ISOLATE, EC_HARDWARE_MEMORY),
    Test("pulse_test", "Pulse Test", "Hardware", "Hardware", 4, 63, "DCGM_FR_TARGET_POWER",
         TARGET_POWER.format(seen=402.0, want=560.0), TRIAGE, EC_HARDWARE_POWER),
    Test("pcie", "PCIe", "Integration", "Integration", 2, 98, "DCGM_FR_PCIE_H_REPLAY_VIOLATION",
         "GPU {gpu} host-side PCIe replay violation, see dmesg for more information", ISOLATE, EC_HARDWARE_PCIE),
    Test("memory_bandwidth", "Memory Bandwidth", "Stress", "Stress", 3, 62, "DCGM_FR_MEMORY_BANDWIDTH",
         "GPU {gpu} only achieved a memory bandwidth of 1510.32 GB/s, failing to meet 2700.00 GB/s for test 0"
         + SYSTEM_TRIAGE, TRIAGE, EC_PERF_THRESHOLD),
    Test("targeted_stress", "Targeted Stress", "Stress", "Stress", 3, 50, "DCGM_FR_STRESS_LEVEL",
         "Max stress level of 11834.2 did not reach desired stress level of 15000.0 for GPU {gpu}" + SYSTEM_TRIAGE,
         TRIAGE, EC_PERF_THRESHOLD),
    Test("targeted_power", "Targeted Power", "Stress", "Stress", 3, 63, "DCGM_FR_TARGET_POWER",
         TARGET_POWER.format(seen=512.3, want=630.0), TRIAGE, EC_HARDWARE_POWER),
)
BY_NAME = {t.name: t for t in TESTS}
# What 4.x prints at level 3+ without a test of its own having failed: nccl-tests is not in DCGM's image.
SKIPPED_BY_DEFAULT = frozenset({"nccl_tests"})
# 3.x's per-GPU tests in the order dcgmi prints them (its per-GPU result indices, dcgm_structs.h at v3.3.9), and
# its categories in the order HelperJsonBuildOutput adds them.
V3_ORDER = ("memory", "diagnostic", "pcie", "targeted_stress", "targeted_power", "memory_bandwidth", "memtest",
            "pulse_test")
V3_CATEGORIES = ("Deployment", "Integration", "Hardware", "Stress")

# PCI device ids as DCGM prints them (`GPU Device IDs`, nvvs/diag-skus.yaml.in at v4.5.2), by node label.
DEVICE_IDS = {"NVIDIA-H100-80GB-HBM3": "2330", "NVIDIA-GB200": "2941", "NVIDIA-GB300-NVL72": "31c2",
              "NVIDIA-B300-SXM6-AC": "3182"}
DEFAULT_DEVICE_ID = "2330"


def level_of(text: str) -> int | None:
    """The level a `--run` argument names (`1`-`4` or a suite name), None when it names none."""
    value = text.strip().lower()
    if value.isdigit() and int(value) in LEVELS:
        return int(value)
    return LEVEL_NAMES.get(value)


def tests_at(level: int, layout: int) -> list[Test]:
    """The tests `dcgmi diag --run LEVEL` runs in the layout's release, in the order it runs them."""
    return [t for t in TESTS if t.level <= level and layout in t.layouts]


def names(layout: int | None = None) -> list[str]:
    """The test names a fault may name (one layout's, or every layout's)."""
    return [t.name for t in TESTS if layout is None or layout in t.layouts]
