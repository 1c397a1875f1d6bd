import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a download is stored: given the temporary file and the response, returns the final
/// location and what to do there.
public typealias DownloadDestination = DownloadRequest.Destination

/// Download-related types, named as in Alamofire so that Moya code compiles unchanged.
public enum DownloadRequest {
    /// What to do at the destination before moving the downloaded file there.
    public struct Options: OptionSet, Sendable, Hashable {
        /// Create the destination's parent directories when they are missing.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)

        /// Remove a file already at the destination.
        public static let removePreviousFile = Options(rawValue: 1 << 1)

        /// The option bits.
        public let rawValue: Int

        /// Creates options from their bits.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }
    }

    /// Chooses the destination of a download from its temporary file and response.
    public typealias Destination = (_ temporaryURL: URL, _ response: HTTPURLResponse) -> (destinationURL: URL, options: Options)
}
