import CRdKafka
import Foundation

/// Owns one `rd_kafka_t` and the retained callback context installed as its opaque.
///
/// Calls borrow the handle under a shared (read) lock; destruction takes the exclusive
/// (write) lock, so no call can use the handle while or after it is destroyed. glibc's
/// default reader-preferring rwlock lets a callback that runs inside a borrowed call
/// (e.g. the rebalance handler storing offsets) borrow again on the same thread.
///
/// `@unchecked Sendable` is safe: `handle` and `contextRef` are only read under the
/// read lock and only changed under the write lock.
final class KafkaHandle: @unchecked Sendable {
    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>
    private var handle: OpaquePointer?
    private var contextRef: Unmanaged<KafkaClientContext>?

    /// Takes ownership of `handle` and of one retain on `context`.
    init(handle: OpaquePointer, context: Unmanaged<KafkaClientContext>) {
        rwlock = .allocate(capacity: 1)
        pthread_rwlock_init(rwlock, nil)
        self.handle = handle
        self.contextRef = context
    }

    /// Runs `body` with the live handle, or throws `closed` if it was destroyed.
    func withHandle<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        guard let handle else { throw KafkaError.closed() }
        return try body(handle)
    }

    var isDestroyed: Bool {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return handle == nil
    }

    /// Destroys the handle with `destroy` (once), then releases the callback context:
    /// after `rd_kafka_destroy*` returns no callback can run any more.
    func destroy(_ destroy: (OpaquePointer) -> Void) {
        pthread_rwlock_wrlock(rwlock)
        let victim = handle
        let context = contextRef
        handle = nil
        contextRef = nil
        pthread_rwlock_unlock(rwlock)
        if let victim { destroy(victim) }
        context?.release()
    }

    /// Forgets the handle without destroying it (and keeps the callback context alive for
    /// librdkafka's threads, which go on running): for a process that is about to exit
    /// when destroying would abort it (librdkafka 2.0.2's cooperative-sticky assertion).
    func abandon() {
        pthread_rwlock_wrlock(rwlock)
        handle = nil
        contextRef = nil  // deliberately not released: callbacks may still use it
        pthread_rwlock_unlock(rwlock)
    }

    deinit {
        // Owners destroy explicitly with the right flags; this is the last resort.
        if let handle {
            rd_kafka_destroy_flags(handle, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE)
        }
        contextRef?.release()
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }
}
