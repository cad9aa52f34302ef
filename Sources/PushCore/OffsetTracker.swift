/// Tracks in-flight offsets of one partition and says which offset may be
/// stored: the lowest contiguous completed offset + 1. Storing anything
/// higher while a lower offset is still in flight would skip that message on
/// a restart, so this is the only place that decides it.
public struct PartitionOffsetTracker: Sendable, Equatable {
    /// Offsets begun, in increasing order, from `head` on.
    private var offsets: [Int64] = []
    private var done: [Bool] = []
    private var head = 0
    /// The last offset this tracker said may be stored (next offset to consume).
    public private(set) var committable: Int64?

    public init() {}

    /// Number of offsets begun and not yet completed.
    public private(set) var inFlight = 0

    /// Registers a fetched message. Offsets must arrive in increasing order.
    /// Returns false (and ignores it) for an offset not above the last one begun.
    @discardableResult
    public mutating func begin(_ offset: Int64) -> Bool {
        if head < offsets.count, let last = offsets.last, offset <= last { return false }
        if head == offsets.count, let c = committable, offset < c { return false }
        offsets.append(offset)
        done.append(false)
        inFlight += 1
        return true
    }

    /// Marks `offset` completed. Returns the new offset to store when the
    /// contiguous completed prefix grew, else nil.
    public mutating func complete(_ offset: Int64) -> Int64? {
        guard let index = find(offset), !done[index] else { return nil }
        done[index] = true
        inFlight -= 1
        guard index == head else { return nil }
        while head < offsets.count, done[head] {
            head += 1
        }
        let next = offsets[head - 1] + 1
        committable = next
        compactIfNeeded()
        return next
    }

    /// Forgets everything in flight (partition revoked or lost).
    public mutating func reset() {
        offsets.removeAll()
        done.removeAll()
        head = 0
        inFlight = 0
    }

    private func find(_ offset: Int64) -> Int? {
        var lo = head, hi = offsets.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            if offsets[mid] == offset { return mid }
            if offsets[mid] < offset { lo = mid + 1 } else { hi = mid - 1 }
        }
        return nil
    }

    private mutating func compactIfNeeded() {
        if head == offsets.count {
            offsets.removeAll(keepingCapacity: true)
            done.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > offsets.count {
            offsets.removeFirst(head)
            done.removeFirst(head)
            head = 0
        }
    }
}
