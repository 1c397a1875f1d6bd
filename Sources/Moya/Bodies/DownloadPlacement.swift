import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Moves a finished download from its temporary file to where the destination closure says.
///
/// The destination never holds a partial file: the temporary file is renamed into place, or,
/// when it lives on another file system, first copied beside the destination and then renamed.
/// On failure the temporary file is deleted and the error is
/// ``FileTransferError/moveFailed(source:destination:underlying:)``, whose `underlying` is the
/// real cause (a `POSIXError` or the `CocoaError` `FileManager` threw).
///
/// Whatever the destination closure returns, nothing but the one entry at exactly the
/// destination URL is ever replaced, and only when it is a regular file or a symbolic link
/// (the link itself, not what it points to) and `.removePreviousFile` is given. A directory at
/// the destination is never removed: the move fails with ``FileTransferError/isDirectory(_:)``
/// as the cause. The replacement is a single `rename(2)`, which cannot remove a directory.
enum DownloadPlacement {
    /// Places the file at the destination that `destination` chooses for `response` (the
    /// response's head, `nil` when it could not be made), or discards it.
    static func place(
        _ response: HTTPURLResponse?,
        from temporaryURL: URL,
        destination: DownloadRequest.Destination,
        fileManager: FileManager = .default
    ) -> Result<Void, any Error> {
        guard let response else {
            PartialFile.discard(temporaryURL, fileManager: fileManager)
            return .failure(URLError(.badServerResponse))
        }
        let (destinationURL, options) = destination(temporaryURL, response)
        do {
            try move(temporaryURL, to: destinationURL, options: options, fileManager: fileManager)
            return .success(())
        } catch {
            PartialFile.discard(temporaryURL, fileManager: fileManager)
            return .failure(FileTransferError.moveFailed(source: temporaryURL, destination: destinationURL, underlying: error))
        }
    }

    /// What is at a path, without following a final symbolic link.
    private enum Entry {
        /// Nothing.
        case none
        /// A regular file or a symbolic link: replaceable.
        case fileOrLink
        /// A directory: never replaced.
        case directory
        /// A device, socket or pipe: never replaced.
        case other
    }

    private static func move(_ source: URL, to destination: URL, options: DownloadRequest.Options, fileManager: FileManager) throws {
        guard destination.isFileURL else {
            throw CocoaError(.fileWriteUnsupportedScheme, userInfo: [NSURLErrorKey: destination])
        }
        let directory = destination.deletingLastPathComponent()
        if options.contains(.createIntermediateDirectories) {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        switch try entry(at: destination.path) {
        case .none:
            break
        case .directory:
            throw FileTransferError.isDirectory(destination)
        case .other:
            throw CocoaError(
                .fileWriteNoPermission,
                userInfo: [
                    NSFilePathErrorKey: destination.path,
                    NSLocalizedFailureReasonErrorKey: "\(destination.path) is not a regular file or symbolic link, and a download replaces only those",
                ])
        case .fileOrLink:
            guard options.contains(.removePreviousFile) else {
                throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path])
            }
        // `rename` below replaces it in one step; nothing is deleted beforehand.
        }
        if rename(source.path, destination.path) == 0 {
            return
        }
        let renameError = errno
        guard renameError == EXDEV else {
            throw POSIXError(POSIXErrorCode(rawValue: renameError) ?? .EIO)
        }
        // Another file system: copy next to the destination, then rename within it. The copy's
        // name does not repeat the destination's, which may already be as long as names go.
        let partial = directory.appendingPathComponent(".moya-download-\(UUID().uuidString).part")
        do {
            try fileManager.copyItem(at: source, to: partial)
            guard rename(partial.path, destination.path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        } catch {
            PartialFile.discard(partial, fileManager: fileManager)
            throw error
        }
        PartialFile.discard(source, fileManager: fileManager)
    }

    /// What is at `path`; throws the `lstat` error other than "no such file".
    private static func entry(at path: String) throws -> Entry {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT {
                return .none
            }
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG, S_IFLNK: return .fileOrLink
        case S_IFDIR: return .directory
        default: return .other
        }
    }
}
