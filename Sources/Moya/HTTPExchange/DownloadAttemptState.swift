import Foundation
import NIOCore

/// What an attempt of a download keeps (``AttemptState/Destination/file(_:)``): its file, and
/// what it needs to check the file once complete or to resume it after a failure. Touched on the
/// attempt's event loop only (`TransportExchange+Download.swift`).
struct DownloadAttemptState {
    /// Whether the response appends to the exchange's resume point's partial file (a `206`).
    var appendsToPartial = false
    /// The length the server announced for the whole file, checked when it is complete (a
    /// resumed download's `Content-Range`).
    var finalLength: Int64?
    /// The response's `If-Range` value, when a failure part-way can be resumed.
    var resumeValidator: String?
    /// The length of the whole representation, when the response said.
    var resumeTotal: Int64?
    /// The digest the response announced for the whole file, checked when it is done.
    var fileDigest: RepresentationDigest?
    /// The file, while it is being created.
    var fileCreation: EventLoopFuture<DownloadFile>?
    /// The file, once created.
    var file: DownloadFile?
}
