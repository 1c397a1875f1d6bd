import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Foundation's text for an error that says nothing of itself.
private let foundationPlaceholder = "The operation could not be completed"

/// An error of the user's that describes nothing.
private struct Opaque: Error {}

extension ErrorTextCoverageTests {
    /// One error the library reports, by the name of its type and case.
    ///
    /// The error is made afresh each time a test reads it, and released when the test is done.
    /// Kept for the whole run in a global, some of these values (an error inside an enum's
    /// payload) were reported as leaks by LeakSanitizer, which does not see a pointer whose
    /// spare bits carry an enum tag.
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        private let make: @Sendable () -> any Error

        var testDescription: String { name }

        /// A new copy of the error.
        var error: any Error { make() }

        init(_ name: String, _ error: @autoclosure @escaping @Sendable () -> any Error) {
            self.name = name
            self.make = error
        }
    }
}

private let file = URL(fileURLWithPath: "/tmp/moya-sample/file.bin")
private let folder = URL(fileURLWithPath: "/tmp/moya-sample/downloads", isDirectory: true)
private let destination = URL(fileURLWithPath: "/tmp/moya-sample/destination.bin")
private let response = Response(statusCode: 418, data: Data("teapot".utf8))

/// Every case of every error type Moya defines, and the errors of its transport.
private let ownErrors: [ErrorTextCoverageTests.Sample] = [
    .init("TLSError.invalidCertificate", TLSError.invalidCertificate("no PEM block")),
    .init("TLSError.invalidPrivateKey", TLSError.invalidPrivateKey("encrypted")),
    .init("TLSError.invalidPublicKey", TLSError.invalidPublicKey("not base64")),
    .init("TLSError.unreadableFile", TLSError.unreadableFile(file, "No such file or directory")),
    .init("TLSError.invalidConfiguration", TLSError.invalidConfiguration("no pinned key")),
    .init("TLSError.serverTrustEvaluationFailed", TLSError.serverTrustEvaluationFailed(host: "api.example.com", reason: "The certificate expired.")),
    .init("TLSError.noEvaluatorFound", TLSError.noEvaluatorFound(host: "api.example.com")),

    .init("SessionError.responseBodyTooLarge, announced", SessionError.responseBodyTooLarge(limit: 10, announcedLength: 20)),
    .init("SessionError.responseBodyTooLarge, read", SessionError.responseBodyTooLarge(limit: 10, announcedLength: nil)),
    .init("SessionError.informationalResponse", SessionError.informationalResponse(statusCode: 101)),
    .init("SessionError.shutDown", SessionError.shutDown),
    .init("SessionError.shuttingDown", SessionError.shuttingDown),
    .init("SessionError.stoppedByShutdown", SessionError.stoppedByShutdown),
    .init("SessionError.notCached", SessionError.notCached(url: URL(string: "https://api.example.com/users"))),
    .init("SessionError.notCached, no URL", SessionError.notCached(url: nil)),

    .init("StreamingError.alreadyConsumed", StreamingError.alreadyConsumed),
    .init("StreamingError.notAnEventStream", StreamingError.notAnEventStream(contentType: "text/html")),
    .init("StreamingError.notAnEventStream, none", StreamingError.notAnEventStream(contentType: nil)),
    .init("StreamingLimitError.lineTooLong", StreamingLimitError.lineTooLong(limit: 1024)),
    .init("StreamingLimitError.eventTooLarge", StreamingLimitError.eventTooLarge(limit: 1024)),

    .init("RequestValidationError.bodyDataInGETRequest", RequestValidationError.bodyDataInGETRequest(Data("x".utf8))),
    .init("RequestValidationError.stubbingDisabled", RequestValidationError.stubbingDisabled),
    .init("RequestValidationError.invalidMethod", RequestValidationError.invalidMethod("GET X")),
    .init("RequestValidationError.invalidPort", RequestValidationError.invalidPort(0)),
    .init("RequestValidationError.invalidHeaderName", RequestValidationError.invalidHeaderName("X Token")),
    .init("RequestValidationError.invalidHeaderValue", RequestValidationError.invalidHeaderValue(name: "X-Token")),
    .init("RequestValidationError.bodyInTRACERequest", RequestValidationError.bodyInTRACERequest),

    .init("ProxyEnvironmentError.malformed", ProxyEnvironmentError(variable: "https_proxy", reason: .malformed)),
    .init("ProxyEnvironmentError.unsupportedScheme", ProxyEnvironmentError(variable: "https_proxy", reason: .unsupportedScheme("ftp"))),
    .init("ProxyEnvironmentError.invalidHost", ProxyEnvironmentError(variable: "https_proxy", reason: .invalidHost)),
    .init("ProxyEnvironmentError.invalidPort", ProxyEnvironmentError(variable: "https_proxy", reason: .invalidPort)),
    .init("ProxyEnvironmentError.invalidCredentials", ProxyEnvironmentError(variable: "https_proxy", reason: .invalidCredentials)),
    .init("ProxyEnvironmentError.socksCredentialsUnsupported", ProxyEnvironmentError(variable: "all_proxy", reason: .socksCredentialsUnsupported)),
    .init("ProxyEnvironmentError.unexpectedPath", ProxyEnvironmentError(variable: "http_proxy", reason: .unexpectedPath)),

    .init("DownloadResumeError.invalidResumeData", DownloadResumeError.invalidResumeData),
    .init("DownloadResumeError.notADownload", DownloadResumeError.notADownload),
    .init("DownloadResumeError.unexpectedRange", DownloadResumeError.unexpectedRange(expectedStart: 10, contentRange: "bytes 0-9/20")),
    .init("DownloadResumeError.lengthMismatch", DownloadResumeError.lengthMismatch(expected: 20, actual: 10)),
    .init("DownloadResumeError.digestMismatch", DownloadResumeError.digestMismatch),

    .init("TemporaryDirectoryError.symbolicLink", TemporaryDirectoryError.symbolicLink(folder)),
    .init("TemporaryDirectoryError.notADirectory", TemporaryDirectoryError.notADirectory(folder)),
    .init("TemporaryDirectoryError.ownedByAnotherUser", TemporaryDirectoryError.ownedByAnotherUser(folder, owner: 65534)),
    .init("TemporaryDirectoryError.writableByOthers", TemporaryDirectoryError.writableByOthers(folder, permissions: 0o777)),
    .init("TemporaryDirectoryError.unavailable", TemporaryDirectoryError.unavailable(folder, code: ENOSPC)),

    .init("FileTransferError.notAFileURL", FileTransferError.notAFileURL(URL(string: "https://example.com/file")!)),
    .init("FileTransferError.fileNotFound", FileTransferError.fileNotFound(file)),
    .init("FileTransferError.isDirectory", FileTransferError.isDirectory(file)),
    .init("FileTransferError.fileNotReadable", FileTransferError.fileNotReadable(file)),
    .init("FileTransferError.readFailed, file", FileTransferError.readFailed(file, underlying: POSIXError(.EIO))),
    .init("FileTransferError.readFailed, stream", FileTransferError.readFailed(nil, underlying: nil)),
    .init("FileTransferError.readFailed, opaque cause", FileTransferError.readFailed(nil, underlying: Opaque())),
    .init("FileTransferError.lengthMismatch", FileTransferError.lengthMismatch(expected: 20, actual: 10)),
    .init("FileTransferError.lengthMismatch, too many", FileTransferError.lengthMismatch(expected: 10, actual: 11)),
    .init("FileTransferError.temporaryFileFailed", FileTransferError.temporaryFileFailed(file, underlying: POSIXError(.ENOSPC))),
    .init(
        "FileTransferError.moveFailed",
        FileTransferError.moveFailed(
            source: file, destination: destination, underlying: CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path]))),

    .init(
        "NonReplayableBodyError.redirect",
        NonReplayableBodyError(reason: .redirect(statusCode: 307, location: URL(string: "https://api.example.com/v2/upload")!))),
    .init("NonReplayableBodyError.retry", NonReplayableBodyError(reason: .retry)),
    .init(
        "NonReplayableBodyError.retry, attempt failed",
        NonReplayableBodyError(reason: .retry, attemptFailure: .underlying(URLError(.networkConnectionLost), nil))),
    .init("NonReplayableBodyError.retry, opaque attempt failure", NonReplayableBodyError(reason: .retry, attemptFailure: .underlying(Opaque(), nil))),
    .init("NonReplayableBodyError.alreadySent", NonReplayableBodyError(reason: .alreadySent)),

    .init("MultipartEncodingError.emptyForm", MultipartEncodingError.emptyForm),
    .init("MultipartEncodingError.methodNotAllowed", MultipartEncodingError.methodNotAllowed(.get)),
    .init("MultipartEncodingError.bodyPartFilenameInvalid", MultipartEncodingError.bodyPartFilenameInvalid(in: file)),

    .init("ParameterEncodingError.missingURL", ParameterEncodingError.missingURL),
    .init("ParameterEncodingError.invalidJSONObject", ParameterEncodingError.invalidJSONObject),
    .init("ParameterEncodingError.jsonEncodingFailed", ParameterEncodingError.jsonEncodingFailed(CocoaError(.propertyListWriteInvalid))),
    .init("ParameterEncodingError.propertyListEncodingFailed", ParameterEncodingError.propertyListEncodingFailed(CocoaError(.propertyListWriteInvalid))),
    .init("ParameterEncodingError.invalidCompositeBodyEncoding", ParameterEncodingError.invalidCompositeBodyEncoding),

    .init("AuthenticationError.missingCredential", AuthenticationError.missingCredential),
    .init("AuthenticationError.refreshFailed", AuthenticationError.refreshFailed(URLError(.userAuthenticationRequired))),
    .init("AuthenticationError.excessiveRefresh", AuthenticationError.excessiveRefresh),

    // What the transport makes of NIO's and NIOSSL's errors.
    .init("refused connection", TransportError.translate(IOError(errnoCode: ECONNREFUSED, reason: "connection reset (error set)"))),
    .init("reset connection", TransportError.translate(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"))),
    .init("other I/O error", TransportError.translate(IOError(errnoCode: EACCES, reason: "connect"))),
    .init("closed channel", TransportError.translate(ChannelError.ioOnClosedChannel)),
    .init("truncated response", TransportError.translate(HTTPParserError.invalidEOFState)),
    .init("malformed response", TransportError.translate(HTTPParserError.invalidHeaderToken)),
    .init("handshake failure", TLSError.annotating(NIOSSLError.handshakeFailed(.sslError([])), host: "api.example.com")),
    .init("unvalidated certificate", TLSError.annotating(NIOSSLError.unableToValidateCertificate, host: "api.example.com")),
    .init("wrong host name", TLSError.annotating(NIOSSLExtraError.failedToValidateHostname, host: "api.example.com")),
    .init("other TLS failure", TLSError.annotating(NIOSSLError.uncleanShutdown, host: "api.example.com")),
    .init("cancellation", MoyaError.cancellation),
]

/// Errors of other libraries that reach the user inside a `MoyaError`: thrown by Foundation, a
/// stub's `.networkError`, a plugin or an interceptor.
private let foreignErrors: [ErrorTextCoverageTests.Sample] = [
    .init("URLError without a description", URLError(.timedOut)),
    .init("URLError(.badURL) without a description", URLError(.badURL)),
    .init("URLError of a code without a sentence", URLError(.dataLengthExceedsMaximum)),
    .init("NSError in NSURLErrorDomain", NSError(domain: NSURLErrorDomain, code: NSURLErrorNotConnectedToInternet)),
    .init("POSIXError", POSIXError(.ECONNREFUSED)),
    .init("CocoaError", CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path])),
    .init("CancellationError", CancellationError()),
    .init("DecodingError", DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Not JSON."))),
    .init("NSError of another domain", NSError(domain: "com.example.app", code: 42)),
    .init("an error type that describes nothing", Opaque()),
    .init("a Swift error with a description", IOError(errnoCode: EIO, reason: "read")),
]

/// Every `MoyaError` case that does not wrap an error.
private let moyaErrors: [ErrorTextCoverageTests.Sample] = [
    .init("MoyaError.imageMapping", MoyaError.imageMapping(response)),
    .init("MoyaError.jsonMapping", MoyaError.jsonMapping(response)),
    .init("MoyaError.stringMapping", MoyaError.stringMapping(response)),
    .init("MoyaError.objectMapping", MoyaError.objectMapping(Opaque(), response)),
    .init("MoyaError.encodableMapping", MoyaError.encodableMapping(Opaque())),
    .init("MoyaError.statusCode", MoyaError.statusCode(response)),
    .init("MoyaError.requestMapping", MoyaError.requestMapping("not a url")),
    .init("MoyaError.parameterEncoding", MoyaError.parameterEncoding(CocoaError(.propertyListWriteInvalid))),
    .init("MoyaError.requestCancelled", MoyaError.requestCancelled),
]

/// The texts a user may see of `error`: what `localizedDescription`, `print` and `NSError` show.
private func texts(of error: any Error) -> [String] {
    [error.localizedDescription, String(describing: error), (error as NSError).localizedDescription]
}

/// Checks that none of `texts` is empty or Foundation's placeholder.
private func expectDescriptive(_ texts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    for text in texts {
        #expect(!text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, sourceLocation: sourceLocation)
        #expect(!text.contains(foundationPlaceholder), "\(text)", sourceLocation: sourceLocation)
    }
}

@Suite("Every error the library reports says what went wrong, itself and inside a MoyaError")
struct ErrorTextCoverageTests {
    @Test("Moya's errors describe themselves, and a MoyaError that wraps one shows that text", arguments: ownErrors)
    func ownError(_ sample: Sample) throws {
        let own = sample.error.localizedDescription
        expectDescriptive(texts(of: sample.error))
        let wrapped = MoyaError.underlying(sample.error, nil)
        expectDescriptive(texts(of: wrapped))
        #expect(wrapped.localizedDescription.contains(own), "\(wrapped.localizedDescription)")
        #expect(wrapped.description.contains(own), "\(wrapped.description)")
    }

    @Test("Other libraries' errors inside a MoyaError are described in words", arguments: foreignErrors)
    func foreignError(_ sample: Sample) {
        expectDescriptive(texts(of: MoyaError.underlying(sample.error, nil)))
        expectDescriptive(texts(of: MoyaError.parameterEncoding(sample.error)))
    }

    @Test("MoyaError's own cases describe themselves", arguments: moyaErrors)
    func moyaError(_ sample: Sample) {
        expectDescriptive(texts(of: sample.error))
    }

    @Test("An error without any description is named by its domain, or type, and code")
    func undescribed() {
        let nsError = MoyaError.underlying(NSError(domain: "Test", code: 7), nil)
        #expect(nsError.localizedDescription.contains("(Test error 7.)"), "\(nsError.localizedDescription)")
        let opaque = MoyaError.underlying(Opaque(), nil)
        #expect(opaque.localizedDescription.contains("(Opaque error 1.)"), "\(opaque.localizedDescription)")
        let cocoa = MoyaError.underlying(CocoaError(.fileWriteUnknown), nil)
        #expect(!cocoa.localizedDescription.contains("Error Domain="), "\(cocoa.localizedDescription)")
    }

    @Test("A failed token refresh and a failed read say what failed underneath")
    func nestedCauses() {
        let refresh = AuthenticationError.refreshFailed(URLError(.timedOut))
        #expect(refresh.localizedDescription.contains("timed out"), "\(refresh.localizedDescription)")
        let read = FileTransferError.readFailed(file, underlying: POSIXError(.EIO))
        #expect(read.localizedDescription.contains(String(cString: strerror(EIO))), "\(read.localizedDescription)")
        let cancelled = MoyaError.requestCancelled
        #expect(cancelled.localizedDescription.contains("cancelled"), "\(cancelled.localizedDescription)")
    }

    /// A one-shot body's error names the redirect it could not follow, or how the attempt it could
    /// not retry failed, and what body to send instead.
    @Test("A one-shot body that cannot be sent again says what asked for it again and what to send instead")
    func nonReplayableBody() {
        let location = URL(string: "https://api.example.com/v2/upload")!
        let redirect = NonReplayableBodyError(reason: .redirect(statusCode: 308, location: location)).localizedDescription
        #expect(redirect.contains("308") && redirect.contains(location.absoluteString), "\(redirect)")
        let retry = NonReplayableBodyError(reason: .retry, attemptFailure: .underlying(URLError(.timedOut), nil)).localizedDescription
        #expect(retry.contains("timed out") && !retry.contains(".)"), "\(retry)")
        let sent = NonReplayableBodyError(reason: .alreadySent).localizedDescription
        #expect(sent.contains("already sent") && sent.contains(".multiple"), "\(sent)")
    }
}
