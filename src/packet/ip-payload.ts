/** What an IP header hands to the transport layer. */
export interface IpPayload {
  protocol: number;
  start: number;
  /** Where the IP header says the packet ends (the data may stop earlier, or carry padding); UNSTATED_END if it does not say. */
  declaredEnd: number;
  /** False for non-first fragments: their payload continues a transport header sent earlier. */
  hasTransportHeader: boolean;
}
