// One replica of a fleet, for the test of processes that share one HTTP cache in PostgreSQL:
// sends one request through a provider whose session's cache is in the database, and prints
// what came back.
//
//     MoyaFleetReplica <postgres-url> <namespace> <method> <url>
//
// Prints `<status> <cache status> <body length>` (cache status `network`, `hit` or
// `revalidated`) and exits 0, or prints the error to standard error and exits 1.
import Foundation
import Moya
import MoyaPostgres

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request the replica sends: a method and an absolute URL.
struct ReplicaTarget: TargetType {
    let url: URL
    let verb: Moya.Method
    var baseURL: URL { url }
    var path: String { "" }
    var method: Moya.Method { verb }
    var task: Task { .requestPlain }
    var headers: [String: String]? { nil }
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let url = URL(string: arguments[4]) else {
    FileHandle.standardError.write(Data("usage: MoyaFleetReplica <postgres-url> <namespace> <method> <url>\n".utf8))
    exit(2)
}
do {
    var configuration = try PostgresHTTPCacheStorage.Configuration(url: arguments[1])
    configuration.namespace = arguments[2]
    let storage = PostgresHTTPCacheStorage(configuration: configuration)
    let cache = HTTPCache(storage: storage, mode: .shared, storageTimeout: 10)
    let session = Session(configuration: .init(cache: cache))
    let provider = MoyaProvider<ReplicaTarget>(session: session)
    let response = try await provider.request(ReplicaTarget(url: url, verb: Moya.Method(rawValue: arguments[3])))
    print("\(response.statusCode) \(response.cacheStatus) \(response.data.count)")
    try await session.shutdown()
    await storage.shutdown()
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
