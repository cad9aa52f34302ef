#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread for the kernel, so `top -H`, `perf` and
/// `/proc/<pid>/task/<tid>/comm` tell the worker's threads apart. On Linux
/// Foundation's `Thread.name` stays inside Foundation: a thread otherwise
/// shows the name of the thread that created it, most often a dispatch
/// thread's `oot.default-qos`. The kernel keeps at most 15 bytes; longer
/// names are cut. Written through `/proc/thread-self/comm` (what
/// `pthread_setname_np` does for another thread; Swift's Glibc module does
/// not export the GNU call). Elsewhere this does nothing.
public enum ThreadName {
    /// The kernel's limit on a thread name, without the terminating NUL.
    public static let maximumBytes = 15

    public static func setCurrent(_ name: String) {
        #if os(Linux)
        var short = name
        while short.utf8.count > maximumBytes { short.removeLast() }
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = short.withCString { write(fd, $0, strlen($0)) }
        #endif
    }

    /// The calling thread's kernel name, or nil where it cannot be read.
    public static func current() -> String? {
        #if os(Linux)
        let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        var bytes = buffer.prefix(count)
        if bytes.last == 0x0A { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
        #else
        return nil
        #endif
    }
}
