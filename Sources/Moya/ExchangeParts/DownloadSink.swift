import Foundation

/// Where a download's body goes: a new temporary file in `folder` when the status is accepted;
/// otherwise memory (the first ``errorBodyLimit`` bytes), so the error response can be read.
struct DownloadSink: Sendable {
    /// The session's folder for temporary files, made or checked when the exchange starts
    /// (``DownloadFolder/prepare()``).
    let folder: DownloadFolder
    /// Whether a status code is a success that is worth storing.
    let accepts: @Sendable (Int) -> Bool
    /// Where an interrupted download of the request stopped, and its partial file, when the
    /// attempt starts: the exchange asks for the rest (`Range` and `If-Range`) and appends a
    /// `206` to that file. When it gives the point up, it tells its owner
    /// (``TransportOwner/transportDroppedResumePoint()``), so that later attempts start over.
    var resume: ResumePoint? = nil

    /// How much of a rejected response's body is kept.
    static let errorBodyLimit = 1 << 20
}
