"""The pod network of a simulated cluster: node addresses, node pod ranges, pod IPs.

As in a kind or kubeadm cluster, each node gets an InternalIP (``172.18.0.2``, ``.3`` …,
by node) and a pod range (``spec.podCIDR``) carved in order from the cluster's pod network
``10.244.0.0/16`` onwards: the lowest free block goes to a new node and comes back when
the node goes. A block is a ``/24`` for Kubernetes' default of 110 pods, and grows to hold
twice the node's pod capacity (``/23`` past 126 pods, ``/20`` for 2,000), so a node can
never run out of addresses while its pods fit; the blocks run up to ``10.255.255.255`` and
a node past that gets no range (its pods then get no IP), as Kubernetes' range allocator
leaves a node without a ``podCIDR`` when the cluster range is full.

Within a block ``.0`` is the network, ``.1`` the node's bridge and the last address the
broadcast; pods get the others the way the host-local IPAM plugin hands them out: the next
free one after the last given, wrapping around, so an address just released is not reused
at once. Everything is integer arithmetic on a pod's bind and release (no string is built
until a pod is read), and the same calls give the same addresses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: where node pod ranges start (the first node's is ``10.244.0.0/24``) and the last address they may use
POD_NETWORK_START = (10 << 24) | (244 << 16)
POD_NETWORK_END = (10 << 24) | 0xFFFFFF
#: the first node's InternalIP (``172.18.0.2``, the next node ``.3`` …)
NODE_ADDRESS_START = (172 << 24) | (18 << 16) | 2
#: the smallest node range: a /24, as for Kubernetes' default of 110 pods
MIN_BLOCK_BITS = 8


def format_ip(address: int) -> str:
    """``167772162`` → ``10.0.0.2``."""
    return f"{address >> 24}.{(address >> 16) & 255}.{(address >> 8) & 255}.{address & 255}"


def block_bits(max_pods: int) -> int:
    """Host bits of a node's pod range: room for twice its pods beside network, bridge and broadcast."""
    return max(MIN_BLOCK_BITS, (2 * max(0, max_pods) + 2).bit_length())


@dataclass(slots=True, eq=False)
class AddressPool:
    """The pod addresses of one node's range (see the module notes)."""

    network: int
    bits: int
    used: set[int] = field(default_factory=set)
    #: offset of the address handed out last (the bridge's to begin with)
    last: int = 1

    @property
    def cidr(self) -> str:
        return f"{format_ip(self.network)}/{32 - self.bits}"

    def take(self) -> int:
        """The next free address after the last one given (0 when the range is full)."""
        usable = (1 << self.bits) - 3  # offsets 2 … size-2
        offset = self.last
        for _ in range(usable):
            offset = offset + 1 if offset < usable + 1 else 2
            if offset not in self.used:
                self.used.add(offset)
                self.last = offset
                return self.network + offset
        return 0

    def give(self, address: int) -> None:
        """``address`` is free again."""
        self.used.discard(address - self.network)


class PodNetwork:
    """Which block and node address each node of a cluster holds."""

    def __init__(self) -> None:
        self._slots: dict[str, int] = {}

    def join(self, node: str, *, max_pods: int) -> tuple[int, AddressPool | None]:
        """A new node's InternalIP and pod range (None when the pod network is full)."""
        taken = set(self._slots.values())
        slot = next(index for index in range(len(taken) + 1) if index not in taken)
        self._slots[node] = slot
        bits = block_bits(max_pods)
        size = 1 << bits
        network = -(-POD_NETWORK_START // size) * size + slot * size  # blocks start on their own boundary
        if network + size - 1 > POD_NETWORK_END:
            return NODE_ADDRESS_START + slot, None
        return NODE_ADDRESS_START + slot, AddressPool(network, bits)

    def leave(self, node: str) -> None:
        """The node is gone: its address and range are free for the next node."""
        self._slots.pop(node, None)


__all__ = ["AddressPool", "PodNetwork", "block_bits", "format_ip"]
