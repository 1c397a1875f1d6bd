import Foundation

/// The one place that deletes a download's file that will not be delivered: the temporary file
/// of a download that failed, was cancelled, was retried or redirected, or could not be moved
/// to its destination, and a half-copied file left by a move across file systems.
///
/// Deleting is best effort: the file may already be gone (cleaned up by a parallel path, or by
/// the system), and nothing the caller could do would help, so errors are ignored here, once.
enum PartialFile {
    /// Deletes the file at `url`, if there is one.
    ///
    /// - Parameters:
    ///   - url:         The file; `nil` does nothing (a response kept in memory has none).
    ///   - fileManager: The file manager to delete with.
    static func discard(_ url: URL?, fileManager: FileManager = .default) {
        guard let url else { return }
        try? fileManager.removeItem(at: url)
    }
}
