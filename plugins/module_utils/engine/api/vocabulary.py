"""NVCRE's API vocabulary, in one place: group and version, kinds, labels, annotations, finalizers,
condition types and the reasons more than one module writes or reads (spec/workflow.md, surroundings.md).

Every other module imports these names; a string of the API spelled out anywhere else is a bug waiting to
drift. Reasons used by a single rule stay beside that rule.
"""
from __future__ import annotations

# ---------------------------------------------------------------- groups, versions, kinds
GROUP = "nvcre.nvidia.com"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_API_VERSION = f"{TRAINER_GROUP}/v1alpha1"

CERTIFICATION = "Certification"
WORKLOAD_RUN = "WorkloadRun"
WORKFLOW = "Workflow"
JOB = "Job"
TRAINJOB = "TrainJob"
TRAINING_RUNTIME = "TrainingRuntime"
CLUSTER_TRAINING_RUNTIME = "ClusterTrainingRuntime"
LOG_PROFILE = "LogProfile"
BANDWIDTH_MEASUREMENT = "BandwidthMeasurement"
GOODPUT_MEASUREMENT = "GoodputMeasurement"

# ---------------------------------------------------------------- labels
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_NVCRE = "nvcre"                     # the value NVCRE stamps on what its controllers create
MANAGER = "cre.certification"                  # the value on Certifications this collection created
LABEL_WORKFLOW = f"{GROUP}/workflow"
LABEL_JOB = f"{GROUP}/job"
LABEL_GROUP = f"{GROUP}/group"
LABEL_CERTIFICATION = f"{GROUP}/certification"
LABEL_WORKLOAD_RUN = f"{GROUP}/workload-run"
LABEL_DOMAIN = f"{GROUP}/category-domain"
LABEL_VARIANT = f"{GROUP}/category-variant"
RESERVED_LABEL_PREFIX = f"{GROUP}/"

# ---------------------------------------------------------------- annotations
ANNOTATION_WORKFLOW_UID = f"{GROUP}/workflow-uid"
ANNOTATION_GROUP_NODES = f"{GROUP}/group-nodes"
ANNOTATION_TEST_SCALE = f"{GROUP}/requested-test-scale"
ANNOTATION_EXPECTED_NETWORK = "cre.certification/expected-network"  # ours: on a Workflow and its multi-node Jobs
# Ours: on a Workflow built from an entry of the user's own catalog_dirs, that entry's file (built-ins carry none).
ANNOTATION_CATALOG_SOURCE = "cre.certification/catalog-source"
# Ours: the run's own GEMM burn-in floors (module option gemm_floors), JSON, on the Certification, each Workflow and
# each burn-in Job, so every judge of a node (the Job tier, the report) reads the same numbers, and a resumed run too.
ANNOTATION_GEMM_FLOORS = "cre.certification/gemm-floors"
# Ours: the run's own golden profile (module option golden_profile), JSON, carried the same way for node-drift.
ANNOTATION_GOLDEN_PROFILE = "cre.certification/golden-profile"
# The run's choices a Workflow and its Jobs carry from their Certification, so every judge reads the same ones.
RUN_ANNOTATIONS = (ANNOTATION_GEMM_FLOORS, ANNOTATION_GOLDEN_PROFILE)
ANNOTATION_JOB_UID = f"{GROUP}/job-uid"      # on a measurement: the Job it measures (a same-named later Job is not it)

# ---------------------------------------------------------------- finalizers (a resident NVCRE's; we add none)
FINALIZER_WORKFLOW = f"{GROUP}/workflow-finalizer"
FINALIZER_CERTIFICATION = f"{GROUP}/certification-finalizer"

# ---------------------------------------------------------------- condition types
IN_PROGRESS = "InProgress"
SUCCEEDED = "Succeeded"
FAILED = "Failed"
EXCLUSIVE = (IN_PROGRESS, SUCCEEDED, FAILED)
HARDWARE_FAILED = "HardwareFailed"
VALIDATION_FAILED = "ValidationFailed"
MEASURING = "Measuring"                        # BandwidthMeasurement / GoodputMeasurement
COMPLETE = "Complete"

# ---------------------------------------------------------------- group phases (status.orchestration.groups[])
PENDING = "Pending"
RUNNING = "Running"

# ---------------------------------------------------------------- reasons
NOT_APPLICABLE = "NotApplicable"
BUILD_FAILED = "BuildFailed"
CATEGORY_NOT_FOUND = "CategoryNotFound"
CERTIFICATION_NAME_COLLISION = "CertificationNameCollision"
WORKFLOW_NAME_COLLISION = "WorkflowNameCollision"
WORKFLOW_FAILED = "WorkflowFailed"
WORKFLOW_VALIDATION_FAILED = "WorkflowValidationFailed"  # a WorkloadRun whose Workflow missed its thresholds
WORKFLOW_SUCCEEDED = "WorkflowSucceeded"
WORKFLOW_DELETED = "WorkflowDeleted"
WORKLOAD_RUN_NAME_COLLISION = "WorkloadRunNameCollision"  # ours: a namesake WorkloadRun we did not create
THRESHOLD_VIOLATION = "ThresholdViolation"
JOB_NAME_COLLISION = "JobNameCollision"
DEPENDENCY_NAME_COLLISION = "DependencyNameCollision"
DEPENDENCY_CREATION_ERROR = "DependencyCreationError"
JOB_TIMED_OUT = "JobTimedOut"
WORKLOAD_FAILED = "WorkloadFailed"
WORKLOAD_CREATION_ERROR = "WorkloadCreationError"
WORKLOAD_SCHEDULING_BLOCKED = "WorkloadSchedulingBlocked"
HARDWARE_FAILURE_DETECTED = "HardwareFailureDetected"
WORKLOAD_STALLED = "WorkloadStalled"
WORKLOAD_RESTARTING = "WorkloadRestarting"
EVIDENCE_LACKING = "EvidenceLacking"           # ours: the tool exited 0 but its output proves nothing about a GPU
REGRESSION_DETECTED = "RegressionDetected"     # ours: a figure regressed against its baseline (enforced)
BELOW_FLEET_MEDIAN = "BelowFleetMedian"        # ours: a burn-in GPU or node slow against its fleet (enforced)
GPU_ARCHITECTURE_DEFAULTS = "GPUArchitectureDefaults"  # Warning: an unlisted architecture sized on the 4/0 fallback

# ---------------------------------------------------------------- measurement reasons (measurements.md §2-§3)
JOB_RUNNING = "JobRunning"
JOB_SUCCEEDED = "JobSucceeded"
JOB_FAILED = "JobFailed"
NO_DATA_COLLECTED = "NoDataCollected"
LOGS_UNAVAILABLE = "LogsUnavailable"
ROWS_REFUSED = "RowsRefused"                       # ours: the log has result rows, none could be trusted
FINAL_READ_PENDING = "FinalReadPending"
LOG_PROFILE_NOT_FOUND = "LogProfileNotFound"
MEASUREMENT_CREATION_ERROR = "MeasurementCreationError"
WORKLOAD_RESTARTED = "WorkloadRestarted"           # a GoodputMeasurement interruption

# ---------------------------------------------------------------- threshold reasons (Job ValidationFailed, §4)
UNKNOWN_THRESHOLD_KEY = "UnknownThresholdKey"
INVALID_THRESHOLD_EXPRESSION = "InvalidThresholdExpression"
MEASUREMENT_TIMEOUT = "MeasurementTimeout"
MEASUREMENT_UNREADABLE = "MeasurementUnreadable"   # ours: the bandwidth measurement refused its log's rows
TRANSPORT_MISMATCH = "TransportMismatch"           # ours: NCCL ran over another network than the platform's
THRESHOLD_VIOLATED = "ThresholdViolated"
THRESHOLDS_MET = "ThresholdsMet"
