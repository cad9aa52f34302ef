import Foundation
import Logging
import PushPostgres

extension PushWorkerService {
    /// Reads the open campaign cancellations into `campaigns` until it
    /// succeeds: before the first batch, so a worker started after a cancel
    /// honours it from its first send. Returns false if the worker was told
    /// to stop meanwhile (PostgreSQL unreachable at start).
    func loadCampaignStops(_ campaigns: CampaignStops, _ pool: PostgresPool) async -> Bool {
        var warned = false
        while !isStopping && !Task.isCancelled {
            do {
                let stops = try await pool.withConnection { try await CampaignCancellations.open(on: $0) }
                campaigns.replace(with: stops)
                if !stops.isEmpty {
                    logger.info("cancelled campaigns loaded; their deliveries are not sent",
                                metadata: ["campaign.cancelled": "\(stops.keys.sorted())"])
                }
                return true
            } catch {
                if !warned {
                    logger.warning("cannot read the campaign cancellations; no batch before they are read",
                                   metadata: ["error": "\(error)"])
                    warned = true
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        return false
    }

    /// Reads the open cancellations again every `CampaignStops.refreshInterval`
    /// while the worker runs. While PostgreSQL cannot be read the last set
    /// stays (the batches' own queries and writes wait for it meanwhile).
    func startCampaignWatch(_ campaigns: CampaignStops, _ pool: PostgresPool) -> Task<Void, Never> {
        let logger = self.logger
        return Task {
            var failing = false
            while !Task.isCancelled {
                try? await Task.sleep(for: CampaignStops.refreshInterval)
                do {
                    let stops = try await pool.withConnection { try await CampaignCancellations.open(on: $0) }
                    let change = campaigns.replace(with: stops)
                    for campaign in change.cancelled {
                        logger.warning("campaign cancelled: its deliveries are no longer sent", metadata: [
                            "campaign": "\(campaign)", "campaign.cancelled_by": "\(stops[campaign]?.by ?? "")",
                        ])
                    }
                    for campaign in change.resumed {
                        logger.info("campaign resumed: its deliveries not yet handled are sent", metadata: ["campaign": "\(campaign)"])
                    }
                    failing = false
                } catch {
                    if Task.isCancelled { break }  // the worker stops
                    if !failing {
                        logger.warning("cannot read the campaign cancellations; keeping the last set", metadata: ["error": "\(error)"])
                    }
                    failing = true
                }
            }
        }
    }
}
