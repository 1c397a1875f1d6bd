import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadRequest {
    /// A destination in the first `directory` of `domain`, named after the file name the
    /// server suggests.
    ///
    /// The name comes from the response's `Content-Disposition` header (`filename*`, then
    /// `filename`, as RFC 6266 describes), else from the last path component of the response's
    /// URL, else it is a unique `download-<UUID>` name. A name from the server is cleaned so
    /// that the file always lands directly in the directory: path separators, `.`, `..` and
    /// control characters never reach the file system (`../../etc/passwd` becomes `passwd`, and
    /// `..` is not used at all). With `.removePreviousFile`, only a file or symbolic link at
    /// that one location is ever replaced.
    ///
    /// - Parameters:
    ///   - directory: The search-path directory, `.documentDirectory` by default.
    ///   - domain:    The domain mask, `.userDomainMask` by default.
    ///   - options:   The options to apply at the destination.
    /// - Returns: A destination closure.
    public static func suggestedDownloadDestination(
        for directory: FileManager.SearchPathDirectory = .documentDirectory,
        in domain: FileManager.SearchPathDomainMask = .userDomainMask,
        options: Options = []
    ) -> Destination {
        return { temporaryURL, response in
            guard let directoryURL = FileManager.default.urls(for: directory, in: domain).first else {
                return (temporaryURL, options)
            }
            return suggestedDownloadDestination(in: directoryURL, options: options)(temporaryURL, response)
        }
    }

    /// A destination in `directoryURL`, named as
    /// ``suggestedDownloadDestination(for:in:options:)`` names it.
    static func suggestedDownloadDestination(in directoryURL: URL, options: Options = []) -> Destination {
        return { _, response in
            let name = DownloadFileName.suggested(for: response)
            return (directoryURL.appendingPathComponent(name, isDirectory: false), options)
        }
    }
}
