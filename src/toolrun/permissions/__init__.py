"""Permission levels and the approval of calls that need a human's yes."""

from toolrun.permissions.approvals import (
    ApprovalRequest,
    Approver,
    AutoApprover,
    Decision,
    DenyApprover,
    TtyApprover,
    default_approver,
)
from toolrun.permissions.levels import PermissionLevel

__all__ = [
    "ApprovalRequest",
    "Approver",
    "AutoApprover",
    "Decision",
    "DenyApprover",
    "PermissionLevel",
    "TtyApprover",
    "default_approver",
]
