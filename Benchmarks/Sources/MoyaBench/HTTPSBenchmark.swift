import BenchServer
import Foundation
import Moya
import NIOSSL

/// `--only https`: the provider over HTTPS in each trust mode against raw AsyncHTTPClient
/// trusting the same certificate, GET at concurrency 1 and 32.
///
/// Without `--url` it starts the benchmarks' in-process server with TLS (HTTP/1.1 only). With
/// `--url https://host:port --ca server.pem` it measures any server, such as nginx offering
/// HTTP/2 through ALPN, whose certificate (or CA) is in the PEM file: raw AsyncHTTPClient and
/// every mode but public-key pinning then negotiate HTTP/2; public-key pinning goes through the
/// provider's TLS bridge, which speaks HTTP/1.1.
enum HTTPSBenchmark {
    /// One way a session decides whom to trust.
    struct Mode: Sendable {
        let name: String
        let configuration: @Sendable (TLSCertificate, String) throws -> Session.Configuration
    }

    static let modes: [Mode] = [
        Mode(name: "custom roots") { certificate, _ in
            .init(tls: TLSSettings(trustRoots: .certificates([certificate])))
        },
        Mode(name: "default evaluator") { certificate, host in
            .init(
                tls: TLSSettings(trustRoots: .certificates([certificate])),
                serverTrustManager: ServerTrustManager(evaluators: [host: DefaultTrustEvaluator()]))
        },
        Mode(name: "pinned certificates") { certificate, host in
            .init(serverTrustManager: ServerTrustManager(evaluators: [host: PinnedCertificatesTrustEvaluator(certificates: [certificate])]))
        },
        Mode(name: "pinned public keys") { certificate, host in
            .init(
                tls: TLSSettings(trustRoots: .certificates([certificate])),
                serverTrustManager: ServerTrustManager(evaluators: [host: PublicKeysTrustEvaluator(keys: [try PublicKeyPin(certificate: certificate)])]))
        },
        Mode(name: "disabled evaluation") { _, host in
            .init(serverTrustManager: ServerTrustManager(evaluators: [host: DisabledTrustEvaluator()]))
        },
    ]

    static func run(options: Options) async throws {
        let pem: Data
        let server: BenchServer?
        let base: URL
        if let url = options.url {
            guard url.scheme == "https", let caPath = options.caPath else {
                print("--only https with --url needs an https URL and --ca PEM")
                exit(2)
            }
            pem = try Data(contentsOf: URL(fileURLWithPath: caPath))
            server = nil
            base = url
        } else {
            pem = Data(BenchServer.certificatePEM.utf8)
            server = try await BenchServer.start(tls: true)
            base = server!.baseURL
        }
        let certificate = try TLSCertificate(pem: pem)
        let nioCertificates = try NIOSSLCertificate.fromPEMBytes(Array(pem))
        let host = base.host ?? "127.0.0.1"
        let port = base.port ?? 443
        let path = server == nil ? "/" : "/bytes/128"
        let workloads = [
            Workload(name: "HTTPS GET, concurrency 1", concurrency: 1, kind: .get(path)),
            Workload(name: "HTTPS GET, concurrency 32", concurrency: 32, kind: .get(path)),
        ]
        var summary: [(String, [Double])] = []
        for mode in modes where options.trustModes?.contains(where: { mode.name.contains($0) }) ?? true {
            let configuration = try mode.configuration(certificate, host)
            print("")
            print("== \(mode.name)")
            let factories: [(key: String, make: () -> any BenchClient)] = [
                ("ahc", { RawAHCClient(base: base, connections: options.connections, trustRoots: nioCertificates) }),
                (
                    "callbacks",
                    { MoyaCallbackClient(base: base, connections: options.connections, configuration: configuration, name: "MoyaProvider (\(mode.name))") }
                ),
            ]
            let ratios = try await measure(workloads, factories: factories, serverPort: port, spreads: server != nil && options.spreadsConnections)
            summary.append((mode.name, ratios.map { $0[1] }))
        }
        print("")
        print("HTTPS, the provider (callbacks) against raw AsyncHTTPClient trusting the same certificate (goal ≥ 0.95x)")
        print(column("trust mode", 22) + column("concurrency 1", 15) + "concurrency 32")
        for (name, ratios) in summary {
            print(column(name, 22) + column(format(ratios[0], 3) + "x", 15) + format(ratios[1], 3) + "x")
        }
        await server?.shutdown()
    }
}
