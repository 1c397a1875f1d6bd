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
/// ``FileTransferError/moveFailed(source:destination:underlying:)``.
enum DownloadPlacement {
    /// Places the file and returns the response to deliver (its body is empty, as in Moya).
    static func place(
        _ response: TransportResponse,
        from temporaryURL: URL,
        destination: DownloadRequest.Destination,
        fileManager: FileManager = .default
    ) -> Result<TransportResponse, any Error> {
        guard let httpResponse = response.httpResponse else {
            try? fileManager.removeItem(at: temporaryURL)
            return .failure(URLError(.badServerResponse))
        }
        let (destinationURL, options) = destination(temporaryURL, httpResponse)
        do {
            try move(temporaryURL, to: destinationURL, options: options, fileManager: fileManager)
            return .success(TransportResponse(response: response.response, data: Data(), fileURL: nil))
        } catch {
            try? fileManager.removeItem(at: temporaryURL)
            return .failure(FileTransferError.moveFailed(source: temporaryURL, destination: destinationURL, underlying: error))
        }
    }

    private static func move(_ source: URL, to destination: URL, options: DownloadRequest.Options, fileManager: FileManager) throws {
        guard destination.isFileURL else {
            throw CocoaError(.fileWriteUnsupportedScheme, userInfo: [NSURLErrorKey: destination])
        }
        let directory = destination.deletingLastPathComponent()
        if options.contains(.createIntermediateDirectories) {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        if fileManager.fileExists(atPath: destination.path) {
            guard options.contains(.removePreviousFile) else {
                throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path])
            }
            try fileManager.removeItem(at: destination)
        }
        if rename(source.path, destination.path) == 0 {
            return
        }
        let renameError = errno
        guard renameError == EXDEV else {
            throw POSIXError(POSIXErrorCode(rawValue: renameError) ?? .EIO)
        }
        // Another file system: copy next to the destination, then rename within it.
        let partial = directory.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).part")
        do {
            try fileManager.copyItem(at: source, to: partial)
            guard rename(partial.path, destination.path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        } catch {
            try? fileManager.removeItem(at: partial)
            throw error
        }
        try? fileManager.removeItem(at: source)
    }
}
