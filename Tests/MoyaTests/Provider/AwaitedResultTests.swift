import Dispatch
import Foundation
import Testing

@testable import Moya

/// The one-shot hand-over between a flight and the task that awaits it, in every order.
@Suite("Awaited result")
struct AwaitedResultTests {
    private static func response(_ statusCode: Int) -> Result<Moya.Response, MoyaError> {
        .success(Moya.Response(statusCode: statusCode, data: Data("\(statusCode)".utf8)))
    }

    @Test("A result that came before the task waits is returned at once, and nothing is launched")
    func filledFirst() async {
        let awaited = AwaitedResult.make()
        awaited.fulfil(Self.response(201))
        let launches = Recorder<Int>()
        let result = await awaited.wait { launches.append(1) }
        #expect((try? result.get())?.statusCode == 201)
        #expect(launches.values.isEmpty)
    }

    @Test("A task that waits first is launched once and resumed by the result from another thread")
    func waitedFirst() async {
        let awaited = AwaitedResult.make()
        let launches = Recorder<Int>()
        let result = await awaited.wait {
            launches.append(1)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { awaited.fulfil(Self.response(202)) }
        }
        #expect((try? result.get())?.statusCode == 202)
        #expect(launches.values == [1])
    }

    @Test("A result delivered inside the launch, before the task suspended, is returned")
    func filledDuringLaunch() async {
        let awaited = AwaitedResult.make()
        let result = await awaited.wait { awaited.fulfil(.failure(.requestCancelled)) }
        guard case .failure(let error) = result else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(error.isCancelled)
    }

    @Test("Results racing the task's wait from other threads: each task gets its own, whole")
    func racing() async {
        // Under ThreadSanitizer this also checks that the response's bytes, written on the
        // filling thread, are ordered before the task reads them.
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<2_000 {
                group.addTask {
                    let awaited = AwaitedResult.make()
                    let data = Data(repeating: UInt8(index % 251), count: 64 + index % 7)
                    let fill: @Sendable () -> Void = { awaited.fulfil(.success(Moya.Response(statusCode: 200 + index % 100, data: data))) }
                    let result: Result<Moya.Response, MoyaError>
                    if index.isMultiple(of: 2) {
                        // Filled from another thread, before or after the task waits.
                        DispatchQueue.global().async(execute: fill)
                        result = await awaited.wait {}
                    } else {
                        result = await awaited.wait { DispatchQueue.global().async(execute: fill) }
                    }
                    guard let response = try? result.get() else { return false }
                    return response.statusCode == 200 + index % 100 && response.data == data
                }
            }
            var all = 0
            var whole = 0
            for await ok in group {
                all += 1
                if ok { whole += 1 }
            }
            #expect(all == 2_000)
            #expect(whole == 2_000)
        }
    }
}
