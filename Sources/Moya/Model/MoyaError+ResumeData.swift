import Foundation

extension MoyaError {
    /// The key under which the underlying error's `userInfo` carries a download's resume data,
    /// as `URLSession` names it (`URLError.downloadTaskResumeData` reads it on Apple platforms).
    public static let resumeDataKey = "NSURLSessionDownloadTaskResumeData"

    /// For a download that failed part-way, the data to go on from where it stopped with
    /// ``MoyaProvider/request(_:resumingWith:callbackQueue:progress:completion:)``; `nil` for
    /// other errors, and for a download the server cannot resume (it has neither a strong entity
    /// tag nor a `Last-Modified` date, or refuses ranges).
    ///
    /// The partial file stays in the session's temporary directory until the download is
    /// resumed (or restarted: the server sent a new version) or the session shuts down.
    ///
    /// ```swift
    /// do throws(MoyaError) {
    ///     _ = try await provider.request(.zen)
    /// } catch {
    ///     if let resumeData = error.resumeData {
    ///         _ = try await provider.request(.zen, resumingWith: resumeData)
    ///     }
    /// }
    /// ```
    public var resumeData: Data? {
        guard case .underlying(let error, _) = self else { return nil }
        return (error as NSError).userInfo[Self.resumeDataKey] as? Data
    }
}
