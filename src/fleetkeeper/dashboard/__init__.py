"""fleetkeeper's dashboard: the fleet, its workloads and every failover, live in a browser.

The plane serves it at ``/dashboard/`` (:mod:`.site`): static files shipped in this package
(``static/``: plain HTML, CSS and JavaScript, no third-party code, no build step) that read
everything through the public API with the signed-in user's token, and one endpoint of its own,
the what-if (:mod:`.whatif`). docs/dashboard.md is the user's guide.
"""

from __future__ import annotations

from fleetkeeper.dashboard.site import PREFIX, Site

__all__ = ["PREFIX", "Site"]
