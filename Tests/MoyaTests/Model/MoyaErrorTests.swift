import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaErrorTests {
    /// A wrapped error with a known description.
    struct WrappedError: LocalizedError, Equatable {
        let message: String

        var errorDescription: String? { self.message }
    }

    /// One `MoyaError` case and everything it should report.
    struct ErrorCase: Sendable, CustomTestStringConvertible {
        let name: String
        let error: MoyaError
        let description: String
        let code: Int
        let response: Response?
        let underlying: WrappedError?

        var testDescription: String { self.name }
    }
}

private let response = Response(statusCode: 418, data: Data("teapot".utf8))
private let wrapped = MoyaErrorTests.WrappedError(message: "Houston, we have a problem")

private let allCases: [MoyaErrorTests.ErrorCase] = [
    MoyaErrorTests.ErrorCase(
        name: "imageMapping", error: .imageMapping(response),
        description: "Failed to map data to an Image.", code: 0, response: response, underlying: nil),
    MoyaErrorTests.ErrorCase(
        name: "jsonMapping", error: .jsonMapping(response),
        description: "Failed to map data to JSON.", code: 1, response: response, underlying: nil),
    MoyaErrorTests.ErrorCase(
        name: "stringMapping", error: .stringMapping(response),
        description: "Failed to map data to a String.", code: 2, response: response, underlying: nil),
    MoyaErrorTests.ErrorCase(
        name: "objectMapping", error: .objectMapping(wrapped, response),
        description: "Failed to map data to a Decodable object.", code: 3, response: response, underlying: wrapped),
    MoyaErrorTests.ErrorCase(
        name: "encodableMapping", error: .encodableMapping(wrapped),
        description: "Failed to encode Encodable object into data.", code: 4, response: nil, underlying: wrapped),
    MoyaErrorTests.ErrorCase(
        name: "statusCode", error: .statusCode(response),
        description: "Status code didn't fall within the given range.", code: 5, response: response, underlying: nil),
    MoyaErrorTests.ErrorCase(
        name: "underlying with response", error: .underlying(wrapped, response),
        description: "Houston, we have a problem", code: 6, response: response, underlying: wrapped),
    MoyaErrorTests.ErrorCase(
        name: "underlying without response", error: .underlying(wrapped, nil),
        description: "Houston, we have a problem", code: 6, response: nil, underlying: wrapped),
    MoyaErrorTests.ErrorCase(
        name: "underlying, one argument", error: .underlying(wrapped),
        description: "Houston, we have a problem", code: 6, response: nil, underlying: wrapped),
    MoyaErrorTests.ErrorCase(
        name: "requestMapping", error: .requestMapping("some invalid URL"),
        description: "Failed to map Endpoint to a URLRequest.", code: 7, response: nil, underlying: nil),
    MoyaErrorTests.ErrorCase(
        name: "parameterEncoding", error: .parameterEncoding(wrapped),
        description: "Failed to encode parameters for URLRequest. Houston, we have a problem", code: 8, response: nil, underlying: wrapped),
]

@Suite("MoyaError")
struct MoyaErrorTests {
    @Test(arguments: allCases)
    func errorDescription(_ testCase: ErrorCase) {
        #expect(testCase.error.errorDescription == testCase.description)
        #expect(testCase.error.localizedDescription == testCase.description)
    }

    @Test(arguments: allCases)
    func responseAccessor(_ testCase: ErrorCase) {
        #expect(testCase.error.response === testCase.response)
    }

    @Test(arguments: allCases)
    func underlyingErrorAccessor(_ testCase: ErrorCase) {
        #expect(testCase.error.underlyingError as? WrappedError == testCase.underlying)
        #expect((testCase.error.underlyingError == nil) == (testCase.underlying == nil))
    }

    @Test(arguments: allCases)
    func bridgedNSError(_ testCase: ErrorCase) {
        let nsError = testCase.error as NSError

        #expect(nsError.domain == "Moya.MoyaError")
        #expect(nsError.code == testCase.code)
        #expect(nsError.localizedDescription == testCase.description)
        #expect(nsError.userInfo[NSLocalizedDescriptionKey] as? String == testCase.description)
        #expect(nsError.userInfo[NSUnderlyingErrorKey] as? WrappedError == testCase.underlying)
        #expect(nsError.userInfo.count == (testCase.underlying == nil ? 1 : 2))
    }

    @Test(arguments: allCases)
    func errorUserInfoDropsNilValues(_ testCase: ErrorCase) {
        let userInfo = testCase.error.errorUserInfo

        #expect(userInfo[NSLocalizedDescriptionKey] as? String == testCase.description)
        #expect(userInfo.keys.contains(NSUnderlyingErrorKey) == (testCase.underlying != nil))
    }

    @Test(arguments: allCases)
    func isStatusCodeError(_ testCase: ErrorCase) {
        #expect(testCase.error.isStatusCodeError == (testCase.name == "statusCode"))
    }

    @Test(arguments: allCases)
    func isNotCancelled(_ testCase: ErrorCase) {
        #expect(testCase.error.isCancelled == false)
    }

    @Test func errorCodesAreDistinctAndInCaseOrder() {
        let codes = allCases.map(\.error.errorCode)

        #expect(codes == [0, 1, 2, 3, 4, 5, 6, 6, 6, 7, 8])
    }

    @Test func underlyingOneArgumentFormHasNoResponse() {
        let error = MoyaError.underlying(wrapped)

        guard case .underlying(let nested, let nestedResponse) = error else {
            Issue.record("expected .underlying")
            return
        }
        #expect(nested as? WrappedError == wrapped)
        #expect(nestedResponse == nil)
    }

    @Test func underlyingNSErrorUsesItsLocalizedDescription() {
        let nsError = NSError(domain: "Test", code: 42, userInfo: [NSLocalizedDescriptionKey: "Houston, we have a problem"])
        let error = MoyaError.underlying(nsError, nil)

        #expect(error.errorDescription == "Houston, we have a problem")
        let bridged = error as NSError
        #expect(bridged.code == 6)
        #expect(bridged.userInfo[NSLocalizedDescriptionKey] as? String == "Houston, we have a problem")
        let nestedNSError = bridged.userInfo[NSUnderlyingErrorKey] as? NSError
        #expect(nestedNSError?.domain == "Test")
        #expect(nestedNSError?.code == 42)
    }

    @Test func nestedMoyaErrorDescription() {
        let error = MoyaError.underlying(MoyaError.statusCode(response), response)

        #expect(error.errorDescription == "Status code didn't fall within the given range.")
        #expect(error.isStatusCodeError == false)
        #expect((error.underlyingError as? MoyaError)?.isStatusCodeError == true)
    }

    @Test func cancelledNSErrorIsCancelled() {
        let cancelled = NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled)

        #expect(MoyaError.underlying(cancelled, nil).isCancelled)
        #expect(MoyaError.underlying(cancelled).isCancelled)
        #expect(MoyaError.underlying(cancelled, response).isCancelled)
    }

    @Test func cancelledURLErrorIsCancelled() {
        #expect(MoyaError.underlying(URLError(.cancelled)).isCancelled)
        #expect(MoyaError.underlying(URLError(.timedOut)).isCancelled == false)
    }

    @Test func otherErrorsAreNotCancelled() {
        let otherCode = NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut)
        let otherDomain = NSError(domain: "Other", code: NSURLErrorCancelled)
        let cancelled = NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled)

        #expect(MoyaError.underlying(otherCode).isCancelled == false)
        #expect(MoyaError.underlying(otherDomain).isCancelled == false)
        #expect(MoyaError.underlying(wrapped).isCancelled == false)
        #expect(MoyaError.parameterEncoding(cancelled).isCancelled == false)
        #expect(MoyaError.encodableMapping(cancelled).isCancelled == false)
    }

    @Test func crossesConcurrencyDomains() async {
        let error = MoyaError.statusCode(response)

        let statusCode = await _Concurrency.Task.detached { error.response?.statusCode }.value

        #expect(statusCode == 418)
    }

    @Test func canBeThrownAndCaughtAsMoyaError() {
        func failing() throws {
            throw MoyaError.requestMapping("bad url")
        }

        let error = #expect(throws: MoyaError.self) { try failing() }

        guard case .requestMapping(let url)? = error else {
            Issue.record("expected .requestMapping, got \(String(describing: error))")
            return
        }
        #expect(url == "bad url")
    }
}
