public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted on a fresh folder, for tests that need a disk that really fills
/// (`ENOSPC`) or a folder that really cannot be written (`EROFS`).
///
/// Mounting needs Linux and the right to mount (root, as on the project's CI machines);
/// ``isAvailable`` says whether this process has it, and tests that need a volume are enabled
/// only then. Unmount with ``unmount()``; the kernel also drops the mount's files with it.
public final class SmallVolume: @unchecked Sendable {
    /// The mounted folder.
    public let folder: URL

    /// Whether this process can mount a tmpfs (checked once, by mounting one).
    public static let isAvailable: Bool = {
        guard let probe = try? SmallVolume(bytes: 64 << 10) else { return false }
        probe.unmount()
        return true
    }()

    /// Why a volume could not be mounted.
    public struct MountError: Error, CustomStringConvertible {
        /// The `errno` of the failed `mount(2)`.
        public var code: Int32
        /// What failed, with the `errno`.
        public var description: String { "mount failed: errno \(code)" }
    }

    /// Mounts a tmpfs of `bytes` on a fresh folder; read-only when `readOnly`.
    public init(bytes: Int, readOnly: Bool = false) throws {
        folder = temporaryFolder("volume")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #if os(Linux)
            let flags: UInt = readOnly ? UInt(MS_RDONLY) : 0
            guard mount("tmpfs", folder.path, "tmpfs", flags, "size=\(bytes)") == 0 else {
                throw MountError(code: errno)
            }
        #else
            throw MountError(code: ENOSYS)
        #endif
    }

    /// Makes the volume read-only (`readOnly`) or writable again, keeping its files.
    public func remount(readOnly: Bool) throws {
        #if os(Linux)
            let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
            guard mount("tmpfs", folder.path, "tmpfs", flags, nil) == 0 else { throw MountError(code: errno) }
        #endif
    }

    /// Fills the volume's free space but `leaving` bytes with a file named `name`.
    public func fill(leaving bytes: Int = 0, name: String = "filler") throws {
        var status = statvfs()
        guard statvfs(folder.path, &status) == 0 else { throw MountError(code: errno) }
        let free = Int(status.f_bavail) * Int(status.f_frsize)
        try Data(count: max(0, free - bytes)).write(to: folder.appendingPathComponent(name))
    }

    /// Unmounts the volume.
    public func unmount() {
        #if os(Linux)
            umount2(folder.path, Int32(MNT_DETACH))
        #endif
    }
}
